package bulk

import (
	"archive/tar"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// Bulk upload (Swift's bulk middleware, PUT ?extract-archive=tar|tar.gz|tar.bz2): each regular
// file of the archive becomes an object under the request's path, the first path element
// naming the container when the URL has none. Every container creation and object PUT is made
// as a subrequest through this front end with the caller's token, as Swift makes them through
// its pipeline, so that authorization, ACLs, quotas and limits apply exactly as to a PUT of
// its own. Limits as Swift's defaults.
const (
	MaxContainersPerExtraction = 10000
	MaxFailedExtractions       = 1000
	// maxBulkPathLength bounds the paths quoted in the answer, as Swift's max_path_length.
	maxBulkPathLength = swiftwire.MaxContainerNameLength + swiftwire.MaxObjectNameLength + 2
)

// extractHeaders are the request headers each extracted object's PUT carries over.
func extractHeaders(hdr http.Header, tok string) http.Header {
	out := http.Header{"X-Auth-Token": {tok}}
	for k, v := range hdr {
		lk := strings.ToLower(k)
		if lk == "x-delete-at" || lk == "x-delete-after" || strings.HasPrefix(lk, "x-object-meta-") {
			out[k] = v
		}
	}
	return out
}

// statusRecorder keeps a subrequest's status and drops its body.
type statusRecorder struct {
	hdr    http.Header
	status int
}

func (s *statusRecorder) Header() http.Header { return s.hdr }
func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
}
func (s *statusRecorder) Write(b []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	return len(b), nil
}

// subrequest runs a PUT through the front end and returns its status line.
func (h *Handler) subrequest(r *http.Request, rq *swiftcore.Request, path string, hdr http.Header, body io.Reader, size int64) (int, string) {
	sub, _ := http.NewRequestWithContext(r.Context(), http.MethodPut, "/", body)
	sub.URL = &url.URL{Path: path}
	sub.Header = hdr
	sub.Header.Set("Content-Length", strconv.FormatInt(size, 10))
	sub.ContentLength = size
	if size == 0 {
		sub.Body = http.NoBody
	}
	rec := &statusRecorder{hdr: http.Header{}}
	srq := &swiftcore.Request{TransID: rq.TransID, Op: swiftcore.OpUnknown}
	if err := h.Serve(rec, sub, srq); err != nil {
		se := swiftcore.ToError(err)
		return se.Status, se.StatusLine()
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return rec.status, strconv.Itoa(rec.status) + " " + http.StatusText(rec.status)
}

// ExtractArchive serves PUT ?extract-archive on an account, a container or a path in one.
func (h *Handler) ExtractArchive(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request, kind string) error {
	var open func(io.Reader) (io.Reader, error)
	switch strings.Trim(strings.ToLower(kind), ".") {
	case "tar":
		open = func(rd io.Reader) (io.Reader, error) { return rd, nil }
	case "tar.gz":
		open = func(rd io.Reader) (io.Reader, error) { return gzip.NewReader(rd) }
	case "tar.bz2":
		open = func(rd io.Reader) (io.Reader, error) { return bzip2.NewReader(rd), nil }
	default:
		return swiftcore.ErrBadRequest.WithText("Unsupported archive format")
	}
	if len(r.TransferEncoding) == 0 && r.Header.Get("Content-Length") == "" {
		return swiftcore.ErrLengthRequired
	}
	created, failed := 0, [][2]string(nil)
	answer := func(status, body string) error {
		if status == "" {
			status = "201 Created"
			if len(failed) > 0 {
				status = "400 Bad Request"
			}
		}
		writeBulkAnswer(w, r, "extract", map[string]any{"Number Files Created": created,
			"Response Body": body, "Response Status": status}, failed)
		return nil
	}
	fail := func(path, status string) {
		failed = append(failed, [2]string{swiftwire.PyQuote(swiftwire.Truncate(path, maxBulkPathLength)), status})
	}
	base := strings.TrimRight(strings.TrimPrefix(strings.Join(nonEmpty(rq.Container, rq.Object), "/"), "/"), "/")
	rd, err := open(r.Body)
	if err != nil {
		return answer("400 Bad Request", "Invalid Tar File: "+err.Error())
	}
	tr := tar.NewReader(rd)
	tok := r.Header.Get("X-Auth-Token")
	if tok == "" {
		tok = r.Header.Get("X-Storage-Token")
	}
	accessed := map[string]bool{}
	containersMade := 0
	for len(failed) < MaxFailedExtractions {
		th, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctxErr := r.Context().Err(); ctxErr != nil {
				return fmt.Errorf("extract archive: %w", ctxErr)
			}
			return answer("400 Bad Request", "Invalid Tar File: "+err.Error())
		}
		if th.Typeflag != tar.TypeReg {
			continue
		}
		objPath := strings.TrimLeft(strings.TrimPrefix(th.Name, "./"), "/")
		if base != "" {
			objPath = base + "/" + objPath
		}
		container, _, ok := strings.Cut(objPath, "/")
		if !ok {
			continue // a file at the archive's top level with no container to go into
		}
		if th.Size > h.MaxObjectSize {
			fail(objPath, "413 Request Entity Too Large")
			continue
		}
		prefix := "/v1/" + rq.Account + "/"
		if !accessed[container] {
			status, line := h.subrequest(r, rq, prefix+container, http.Header{"X-Auth-Token": {tok}}, nil, 0)
			switch {
			case status == http.StatusUnauthorized:
				fail(prefix+container, line)
				return answer("401 Unauthorized", "")
			case status == http.StatusCreated:
				containersMade++
				if containersMade > MaxContainersPerExtraction {
					return answer("400 Bad Request", fmt.Sprintf("More than %d containers to create from tar.", MaxContainersPerExtraction))
				}
			case status/100 != 2:
				// The object PUT may still succeed (an ACL may allow writing into a
				// container the caller may not create); the failure is reported with it.
			}
		}
		hdr := extractHeaders(r.Header, tok)
		for k, v := range th.PAXRecords {
			if name := swiftwire.PaxHeader(k); name != "" {
				hdr.Set(name, v)
			}
		}
		status, line := h.subrequest(r, rq, prefix+objPath, hdr, io.LimitReader(tr, th.Size), th.Size)
		accessed[container] = true
		switch {
		case status/100 == 2:
			created++
		case status == http.StatusUnauthorized:
			fail(objPath, line)
			return answer("401 Unauthorized", "")
		default:
			fail(objPath, line)
		}
	}
	return answer("", "")
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
