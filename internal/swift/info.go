package swift

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/policy"
	"github.com/cairn-store/cairn/internal/swift/bulk"
	"github.com/cairn-store/cairn/internal/swift/largeobj"
	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
	"github.com/cairn-store/cairn/internal/swift/symlink"
)

// apiVersion is the Swift release whose API this front end follows; /info reports it so that
// clients that gate features on the version treat Cairn like that release.
const apiVersion = "2.30.1"

// info serves GET /info: Swift's capabilities document. It lists only what this front end
// does, under the names Swift's middlewares register (DLO, which Swift 2.30 does not register,
// is served without an entry), and the limits it enforces.
func (h *Handler) info(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		return swiftcore.ErrMethodNotAllowed
	}
	doc := map[string]any{
		"swift": map[string]any{
			"version":                   apiVersion,
			"max_file_size":             h.MaxObjectSize,
			"max_meta_name_length":      swiftwire.MaxMetaNameLength,
			"max_meta_value_length":     swiftwire.MaxMetaValueLength,
			"max_meta_count":            swiftwire.MaxMetaCount,
			"max_meta_overall_size":     swiftwire.MaxMetaOverallSize,
			"max_header_size":           swiftwire.MaxHeaderSize,
			"max_object_name_length":    swiftwire.MaxObjectNameLength,
			"container_listing_limit":   swiftwire.ListingLimit,
			"account_listing_limit":     swiftwire.ListingLimit,
			"max_account_name_length":   swiftwire.MaxAccountNameLength,
			"max_container_name_length": swiftwire.MaxContainerNameLength,
			"extra_header_count":        0,
			"valid_api_versions":        []string{"v1"},
			"strict_cors_mode":          true,
			"policies":                  h.policiesInfo(),
			// Accounts are managed by Cairn's tenant administration, never by Swift requests.
			"allow_account_management": false,
			"account_autocreate":       true,
		},
		"tempauth": map[string]any{"account_acls": true},
		"slo": map[string]any{"max_manifest_segments": largeobj.MaxManifestSegments, "max_manifest_size": largeobj.MaxManifestSize,
			"min_segment_size": largeobj.MinSegmentSize, "yield_frequency": int(largeobj.HeartbeatEvery / time.Second), "allow_async_delete": false},
		"etag_quoter": map[string]any{"enable_by_default": false},
		// Container quotas are set with X-Container-Meta-Quota-*; account quotas are enforced
		// too, but set by Cairn's tenant administration, so account_quotas is not claimed.
		"container_quotas": map[string]any{},
		"tempurl": map[string]any{"methods": swiftwire.TempURLMethods, "allowed_digests": []string{"sha1", "sha256", "sha512"},
			"incoming_remove_headers": []string{"x-timestamp"}, "incoming_allow_headers": []string{},
			"outgoing_remove_headers": []string{"x-object-meta-*"}, "outgoing_allow_headers": []string{"x-object-meta-public-*"}},
		"bulk_upload": map[string]any{"max_containers_per_extraction": bulk.MaxContainersPerExtraction,
			"max_failed_extractions": bulk.MaxFailedExtractions},
		"bulk_delete":       map[string]any{"max_deletes_per_request": bulk.MaxDeletesPerRequest, "max_failed_deletes": bulk.MaxFailedDeletes},
		"staticweb":         map[string]any{},
		"symlink":           map[string]any{"symloop_max": symlink.SymloopMax, "static_links": true},
		"versioned_writes":  map[string]any{"allowed_flags": []string{"x-versions-location", "x-history-location"}},
		"object_versioning": map[string]any{},
	}
	if len(h.cfg.StorageDomains) > 0 {
		// Swift's domain_remap registers itself with this one setting (storage domains are not
		// shown; clients are told them).
		doc["domain_remap"] = map[string]any{"default_reseller_prefix": nil}
	}
	for name, v := range h.cfg.Capabilities {
		doc[name] = v
	}
	body, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json; charset=UTF-8")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		w.Write(body)
	}
	return nil
}

// policiesInfo lists the storage policies as Swift's /info does (name, aliases as one
// comma-separated string, default only on the default), without the deprecated ones, which
// Swift hides, and without erasure-coded ones this version cannot store objects in (Swift's
// codes: 501). An erasure-coded policy also says what it is (policy_type, ec_type and its
// fragments, the keys of swift.conf), which Swift's public /info leaves out, so that clients
// can tell which policies erasure-code their objects.
func (h *Handler) policiesInfo() []map[string]any {
	var out []map[string]any
	for _, p := range h.Proxy.Policies().All() {
		if p.Deprecated || p.Usable() != nil {
			continue
		}
		e := map[string]any{"name": p.Name, "aliases": strings.Join(p.Names(), ", ")}
		if p.Default {
			e["default"] = true
		}
		if p.Type == policy.ErasureCoding {
			e["policy_type"] = string(p.Type)
			e["ec_type"] = p.EC.Scheme
			e["ec_num_data_fragments"] = p.EC.DataFragments
			e["ec_num_parity_fragments"] = p.EC.ParityFragments
			e["ec_object_segment_size"] = p.EC.SegmentSize
		}
		out = append(out, e)
	}
	return out
}
