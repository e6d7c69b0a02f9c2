package admin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/cairn-store/cairn/internal/auth"
)

// Request and response documents.
type (
	// CreateAccountRequest is POST /admin/v1/accounts.
	CreateAccountRequest struct {
		Name string `json:"name"`
	}
	// QuotaRequest is PUT /admin/v1/accounts/NAME/quota (0: no limit).
	QuotaRequest struct {
		Bytes   *int64 `json:"bytes"`
		Objects *int64 `json:"objects"`
	}
	// CreateUserRequest is POST /admin/v1/accounts/NAME/users.
	CreateUserRequest struct {
		User  string `json:"user"`
		Admin bool   `json:"admin"`
		// Keys chosen by the operator (each optional; generated when empty).
		AccessKey string `json:"access_key,omitempty"`
		SecretKey string `json:"secret_key,omitempty"`
		SwiftKey  string `json:"swift_key,omitempty"`
	}
	// AccountList is GET /admin/v1/accounts.
	AccountList struct {
		Accounts []auth.Account `json:"accounts"`
	}
	// UserList is GET /admin/v1/accounts/NAME/users.
	UserList struct {
		Users []auth.User `json:"users"`
	}
	// AccountUsage is GET /admin/v1/accounts/NAME/usage.
	AccountUsage struct {
		Account string `json:"account"`
		Usage
		QuotaBytes   int64 `json:"quota_bytes"`
		QuotaObjects int64 `json:"quota_objects"`
	}
)

// route dispatches on the path below Prefix. A hand-written router rather than
// http.ServeMux, so that every miss is a JSON error and nothing is redirected.
func (h *Handler) route(w http.ResponseWriter, r *http.Request, body []byte) error {
	rest, ok := strings.CutPrefix(r.URL.Path, Prefix)
	if !ok {
		return errorf(http.StatusNotFound, CodeNotFound, "no such admin resource %q", r.URL.Path)
	}
	seg := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	ctx := r.Context()
	method := func(allowed ...string) error {
		for _, m := range allowed {
			if r.Method == m {
				return nil
			}
		}
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		return errorf(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.Path)
	}
	if seg[0] == "status" && len(seg) == 1 {
		if err := method(http.MethodGet); err != nil {
			return err
		}
		return h.status(w, r)
	}
	if seg[0] == "microstores" && len(seg) <= 3 {
		return h.microstores(w, r, seg, body, method)
	}
	if (seg[0] == "microstore-pool" || seg[0] == "microstore-plan" || seg[0] == "microstore-buckets") && len(seg) == 1 {
		return h.microstoreRoute(w, r, seg[0], body, method)
	}
	if seg[0] == "workload" && len(seg) == 1 {
		if err := method(http.MethodGet); err != nil {
			return err
		}
		return h.workload(w)
	}
	if seg[0] == "acl-migration" && len(seg) == 1 {
		if err := method(http.MethodPost); err != nil {
			return err
		}
		return h.aclMigration(w, r)
	}
	if seg[0] == "kms" {
		return h.kms(ctx, w, r, seg, body)
	}
	if seg[0] != "accounts" || len(seg) > 6 {
		return errorf(http.StatusNotFound, CodeNotFound, "no such admin resource %q", r.URL.Path)
	}
	switch len(seg) {
	case 1: // accounts
		if err := method(http.MethodGet, http.MethodPost); err != nil {
			return err
		}
		if r.Method == http.MethodGet {
			accts, err := h.cfg.Store.Accounts(ctx)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, AccountList{Accounts: accts})
			return nil
		}
		var req CreateAccountRequest
		if err := decode(body, &req); err != nil {
			return err
		}
		a, err := h.cfg.Store.CreateAccount(ctx, req.Name)
		if err != nil {
			return err
		}
		h.log.InfoContext(ctx, "admin: account created", "account", a.Name)
		writeJSON(w, http.StatusCreated, a)
		return nil
	case 2: // accounts/NAME
		if err := method(http.MethodGet, http.MethodDelete); err != nil {
			return err
		}
		if r.Method == http.MethodGet {
			a, err := h.cfg.Store.Account(ctx, seg[1])
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, a)
			return nil
		}
		return h.deleteAccount(w, r, seg[1])
	}
	name, sub := seg[1], seg[2]
	switch {
	case sub == "quota" && len(seg) == 3:
		if err := method(http.MethodPut); err != nil {
			return err
		}
		return h.setQuota(w, r, name, body)
	case sub == "usage" && len(seg) == 3:
		if err := method(http.MethodGet); err != nil {
			return err
		}
		return h.usage(w, r, name)
	case sub == "users" && len(seg) == 3:
		if err := method(http.MethodGet, http.MethodPost); err != nil {
			return err
		}
		if r.Method == http.MethodGet {
			users, err := h.cfg.Store.Users(ctx, name)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, UserList{Users: users})
			return nil
		}
		var req CreateUserRequest
		if err := decode(body, &req); err != nil {
			return err
		}
		c, err := h.cfg.Store.CreateUserWithKeys(ctx, name, req.User, req.Admin,
			auth.GivenKeys{AccessKey: req.AccessKey, SecretKey: req.SecretKey, SwiftKey: req.SwiftKey})
		if err != nil {
			return err
		}
		h.log.InfoContext(ctx, "admin: user created", "account", name, "user", req.User, "admin", req.Admin, "access_key", c.AccessKey)
		writeJSON(w, http.StatusCreated, c)
		return nil
	case sub == "users" && len(seg) == 4:
		if err := method(http.MethodGet, http.MethodDelete); err != nil {
			return err
		}
		return h.user(w, r, name, seg[3])
	case sub == "users" && len(seg) == 5 && seg[4] == "keys":
		if err := method(http.MethodPost); err != nil {
			return err
		}
		c, err := h.cfg.Store.RotateKeys(ctx, name, seg[3])
		if err != nil {
			return err
		}
		h.log.InfoContext(ctx, "admin: keys rotated", "account", name, "user", seg[3], "access_key", c.AccessKey)
		writeJSON(w, http.StatusOK, c)
		return nil
	}
	return errorf(http.StatusNotFound, CodeNotFound, "no such admin resource %q", r.URL.Path)
}

// deleteAccount deletes an account that has neither users nor data: its containers would
// otherwise come back with an account of the same name.
func (h *Handler) deleteAccount(w http.ResponseWriter, r *http.Request, name string) error {
	ctx := r.Context()
	if _, err := h.cfg.Store.Account(ctx, name); err != nil {
		return err
	}
	if name != auth.RootAccount {
		u, err := h.cfg.Usage(ctx, name)
		if err != nil {
			return fmt.Errorf("admin: usage of %q: %w", name, err)
		}
		if u.Containers > 0 || u.Objects > 0 {
			return errorf(http.StatusConflict, CodeAccountNotEmpty, "account %q still holds %d containers and %d objects; empty it first", name, u.Containers, u.Objects)
		}
	}
	if err := h.cfg.Store.DeleteAccount(ctx, name); err != nil {
		return err
	}
	h.log.InfoContext(ctx, "admin: account deleted", "account", name)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *Handler) setQuota(w http.ResponseWriter, r *http.Request, name string, body []byte) error {
	ctx := r.Context()
	var req QuotaRequest
	if err := decode(body, &req); err != nil {
		return err
	}
	a, err := h.cfg.Store.Account(ctx, name)
	if err != nil {
		return err
	}
	// A field left out keeps its value, so that one limit can be changed alone.
	bytes, objects := a.QuotaBytes, a.QuotaObjects
	if req.Bytes != nil {
		bytes = *req.Bytes
	}
	if req.Objects != nil {
		objects = *req.Objects
	}
	if err := h.cfg.Store.SetQuota(ctx, name, bytes, objects); err != nil {
		return err
	}
	if a, err = h.cfg.Store.Account(ctx, name); err != nil {
		return err
	}
	h.log.InfoContext(ctx, "admin: quota set", "account", name, "bytes", bytes, "objects", objects)
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (h *Handler) usage(w http.ResponseWriter, r *http.Request, name string) error {
	ctx := r.Context()
	a, err := h.cfg.Store.Account(ctx, name)
	if err != nil {
		return err
	}
	u, err := h.cfg.Usage(ctx, name)
	if err != nil {
		return fmt.Errorf("admin: usage of %q: %w", name, err)
	}
	writeJSON(w, http.StatusOK, AccountUsage{Account: name, Usage: u, QuotaBytes: a.QuotaBytes, QuotaObjects: a.QuotaObjects})
	return nil
}

func (h *Handler) user(w http.ResponseWriter, r *http.Request, account, user string) error {
	ctx := r.Context()
	if r.Method == http.MethodDelete {
		if err := h.cfg.Store.DeleteUser(ctx, account, user); err != nil {
			return err
		}
		h.log.InfoContext(ctx, "admin: user deleted", "account", account, "user", user)
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	users, err := h.cfg.Store.Users(ctx, account)
	if err != nil {
		return err
	}
	for _, u := range users {
		if u.User == user {
			writeJSON(w, http.StatusOK, u)
			return nil
		}
	}
	return errorf(http.StatusNotFound, CodeNoSuchUser, "user %s:%s does not exist", account, user)
}

// decode parses a request document strictly: unknown fields are mistakes worth reporting.
func decode(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errorf(http.StatusBadRequest, CodeInvalidArgument, "request body is not the expected JSON document: %v", err)
	}
	if dec.More() {
		return errorf(http.StatusBadRequest, CodeInvalidArgument, "request body holds more than one JSON document")
	}
	return nil
}
