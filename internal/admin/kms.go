package admin

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/sse"
)

// The SSE-KMS keys (package sse keeps them in the tenant store, their material sealed by the
// master key, never shown):
//
//	GET  /admin/v1/kms/keys             list
//	POST /admin/v1/kms/keys             create, {"alias": "..."} optional
//	GET  /admin/v1/kms/keys/REF         show (REF: an ID, alias/NAME, or an ARN)
//	POST /admin/v1/kms/keys/REF/enable  enable
//	POST /admin/v1/kms/keys/REF/disable disable: no new encryption and no decryption with it

// KMSKey is a KMS key as the API shows it.
type KMSKey struct {
	ID      string    `json:"id"`
	Alias   string    `json:"alias,omitempty"`
	Enabled bool      `json:"enabled"`
	Created time.Time `json:"created"`
}

// KMSKeyList is GET /admin/v1/kms/keys.
type KMSKeyList struct {
	Keys []KMSKey `json:"keys"`
}

// CreateKMSKeyRequest is POST /admin/v1/kms/keys.
type CreateKMSKeyRequest struct {
	Alias string `json:"alias,omitempty"`
}

// CodeNoSuchKMSKey and CodeKMSKeyExists are the KMS errors' codes.
const (
	CodeNoSuchKMSKey = "NoSuchKMSKey"
	CodeKMSKeyExists = "KMSKeyExists"
	CodeNotEnabled   = "NotImplemented"
)

func kmsKeyOf(k sse.KMSKey) KMSKey {
	return KMSKey{ID: k.ID, Alias: k.Alias, Enabled: k.Enabled, Created: k.Created}
}

func kmsError(err error) error {
	switch {
	case errors.Is(err, sse.ErrKMSKeyNotFound):
		return errorf(http.StatusNotFound, CodeNoSuchKMSKey, "%s", strings.TrimPrefix(err.Error(), "sse: "))
	case errors.Is(err, sse.ErrKMSKeyExists):
		return errorf(http.StatusConflict, CodeKMSKeyExists, "%s", strings.TrimPrefix(err.Error(), "sse: "))
	case errors.Is(err, sse.ErrNoKMS):
		return errorf(http.StatusNotImplemented, CodeNotEnabled, "server-side encryption is not configured")
	case errors.Is(err, sse.ErrInvalidAlias):
		return errorf(http.StatusBadRequest, CodeInvalidArgument, "%s", strings.TrimPrefix(err.Error(), "sse: "))
	}
	return err
}

// kms serves /admin/v1/kms/... (seg[0] == "kms").
func (h *Handler) kms(ctx context.Context, w http.ResponseWriter, r *http.Request, seg []string, body []byte) error {
	method := func(allowed string) error {
		if r.Method == allowed {
			return nil
		}
		w.Header().Set("Allow", allowed)
		return errorf(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.Path)
	}
	kr := h.cfg.KMS
	if kr == nil {
		return kmsError(sse.ErrNoKMS)
	}
	if len(seg) < 2 || seg[1] != "keys" || len(seg) > 4 {
		return errorf(http.StatusNotFound, CodeNotFound, "no such admin resource %q", r.URL.Path)
	}
	switch len(seg) {
	case 2:
		if r.Method == http.MethodGet {
			keys, err := kr.KMSKeys(ctx)
			if err != nil {
				return kmsError(err)
			}
			out := KMSKeyList{Keys: []KMSKey{}}
			for _, k := range keys {
				out.Keys = append(out.Keys, kmsKeyOf(k))
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}
		if err := method(http.MethodPost); err != nil {
			return err
		}
		var req CreateKMSKeyRequest
		if len(body) > 0 {
			if err := decode(body, &req); err != nil {
				return err
			}
		}
		k, err := kr.CreateKMSKey(ctx, req.Alias)
		if err != nil {
			return kmsError(err)
		}
		h.log.InfoContext(ctx, "admin: KMS key created", "id", k.ID, "alias", k.Alias)
		writeJSON(w, http.StatusCreated, kmsKeyOf(k))
		return nil
	}
	ref, err := url.PathUnescape(seg[2])
	if err != nil {
		return errorf(http.StatusBadRequest, CodeInvalidArgument, "bad key reference")
	}
	if len(seg) == 3 {
		if err := method(http.MethodGet); err != nil {
			return err
		}
		k, err := kr.KMSKey(ctx, ref)
		if err != nil {
			return kmsError(err)
		}
		writeJSON(w, http.StatusOK, kmsKeyOf(k))
		return nil
	}
	if err := method(http.MethodPost); err != nil {
		return err
	}
	var enable bool
	switch seg[3] {
	case "enable":
		enable = true
	case "disable":
	default:
		return errorf(http.StatusNotFound, CodeNotFound, "no such admin resource %q", r.URL.Path)
	}
	k, err := kr.SetKMSKeyEnabled(ctx, ref, enable)
	if err != nil {
		return kmsError(err)
	}
	h.log.InfoContext(ctx, "admin: KMS key changed", "id", k.ID, "enabled", k.Enabled)
	writeJSON(w, http.StatusOK, kmsKeyOf(k))
	return nil
}

// kmsRef is a key reference as a path segment (an alias holds "/").
func kmsRef(ref string) string { return url.PathEscape(ref) }

// CreateKMSKey makes an SSE-KMS key, with an alias if not "".
func (c *Client) CreateKMSKey(ctx context.Context, alias string) (KMSKey, error) {
	var k KMSKey
	err := c.do(ctx, http.MethodPost, "kms/keys", CreateKMSKeyRequest{Alias: alias}, &k)
	return k, err
}

// KMSKeys lists the SSE-KMS keys.
func (c *Client) KMSKeys(ctx context.Context) ([]KMSKey, error) {
	var l KMSKeyList
	err := c.do(ctx, http.MethodGet, "kms/keys", nil, &l)
	return l.Keys, err
}

// KMSKey shows one SSE-KMS key, by ID, alias/NAME or ARN.
func (c *Client) KMSKey(ctx context.Context, ref string) (KMSKey, error) {
	var k KMSKey
	err := c.do(ctx, http.MethodGet, "kms/keys/"+kmsRef(ref), nil, &k)
	return k, err
}

// SetKMSKeyEnabled enables or disables an SSE-KMS key.
func (c *Client) SetKMSKeyEnabled(ctx context.Context, ref string, enabled bool) (KMSKey, error) {
	op := "disable"
	if enabled {
		op = "enable"
	}
	var k KMSKey
	err := c.do(ctx, http.MethodPost, "kms/keys/"+kmsRef(ref)+"/"+op, nil, &k)
	return k, err
}
