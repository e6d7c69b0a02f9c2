package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/microstore"
	"github.com/cairn-store/cairn/internal/rmanager"
	"github.com/cairn-store/cairn/internal/workload"
)

// MicrostoreStore keeps the cluster's microstores' description (the server's, in the cluster).
type MicrostoreStore interface {
	Describe(ctx context.Context) (*microstore.Description, error)
	// Change applies a change and returns the description it made.
	Change(ctx context.Context, change microstore.Change) (*microstore.Description, error)
	// Buckets returns the cluster's buckets with their microstores (truncated: not all).
	Buckets(ctx context.Context) (buckets []microstore.Bucket, truncated bool, err error)
	// Plan is what the resource manager would do now, and why.
	Plan(ctx context.Context) (rmanager.Plan, error)
}

// Request documents of the microstore routes.
type (
	// ProxiesRequest is PUT /admin/v1/microstores/NAME/proxies: the microstore's proxies.
	ProxiesRequest struct {
		Proxies []string `json:"proxies"`
	}
	// ClassesRequest is PUT /admin/v1/microstores/NAME/classes: the workload classes whose
	// new buckets go to the microstore.
	ClassesRequest struct {
		Classes []workload.Class `json:"classes"`
	}
	// BucketList is GET /admin/v1/microstore-buckets: every bucket of the cluster and its
	// microstore ("" for none), for a load balancer's map; Truncated when some were left out.
	BucketList struct {
		Buckets   []microstore.Bucket `json:"buckets"`
		Truncated bool                `json:"truncated,omitempty"`
	}
)

// microstoreRoute serves the routes beside /admin/v1/microstores: PUT microstore-pool (the free
// proxies, in place of the pool's: ProxiesRequest), GET microstore-plan (what the resource
// manager would do now) and GET microstore-buckets (every bucket and its microstore).
func (h *Handler) microstoreRoute(w http.ResponseWriter, r *http.Request, route string, body []byte, method func(...string) error) error {
	store := h.cfg.Microstores
	if store == nil {
		return errorf(http.StatusNotFound, CodeNotFound, "no microstores here")
	}
	ctx := r.Context()
	var out any
	var err error
	switch route {
	case "microstore-pool":
		if err := method(http.MethodPut); err != nil {
			return err
		}
		var req ProxiesRequest
		if err := decodeBody(body, &req); err != nil {
			return err
		}
		out, err = store.Change(ctx, microstore.SetPool(req.Proxies))
	case "microstore-plan":
		if err := method(http.MethodGet); err != nil {
			return err
		}
		out, err = store.Plan(ctx)
	default: // microstore-buckets
		if err := method(http.MethodGet); err != nil {
			return err
		}
		var l BucketList
		l.Buckets, l.Truncated, err = store.Buckets(ctx)
		if l.Buckets == nil {
			l.Buckets = []microstore.Bucket{}
		}
		out = l
	}
	if err != nil {
		return microstoreError(err)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// microstores serves /admin/v1/microstores[/NAME[/proxies|/classes]].
func (h *Handler) microstores(w http.ResponseWriter, r *http.Request, seg []string, body []byte, method func(...string) error) error {
	store := h.cfg.Microstores
	if store == nil {
		return errorf(http.StatusNotFound, CodeNotFound, "no microstores here")
	}
	ctx := r.Context()
	change := func(status int, c microstore.Change) error {
		d, err := store.Change(ctx, c)
		if err != nil {
			return microstoreError(err)
		}
		writeJSON(w, status, d)
		return nil
	}
	switch len(seg) {
	case 1:
		if err := method(http.MethodGet, http.MethodPost); err != nil {
			return err
		}
		if r.Method == http.MethodGet {
			d, err := store.Describe(ctx)
			if err != nil {
				return microstoreError(err)
			}
			writeJSON(w, http.StatusOK, d)
			return nil
		}
		var m microstore.Microstore
		if err := decodeBody(body, &m); err != nil {
			return err
		}
		return change(http.StatusCreated, microstore.Create(m))
	case 2:
		if err := method(http.MethodGet, http.MethodDelete); err != nil {
			return err
		}
		if r.Method == http.MethodDelete {
			return change(http.StatusOK, microstore.Delete(seg[1]))
		}
		d, err := store.Describe(ctx)
		if err != nil {
			return microstoreError(err)
		}
		m, ok := d.Find(seg[1])
		if !ok {
			return errorf(http.StatusNotFound, CodeNoSuchMicrostore, "no microstore %q", seg[1])
		}
		writeJSON(w, http.StatusOK, m)
		return nil
	case 3:
		if err := method(http.MethodPut); err != nil {
			return err
		}
		switch seg[2] {
		case "proxies":
			var req ProxiesRequest
			if err := decodeBody(body, &req); err != nil {
				return err
			}
			return change(http.StatusOK, microstore.Resize(seg[1], req.Proxies))
		case "classes":
			var req ClassesRequest
			if err := decodeBody(body, &req); err != nil {
				return err
			}
			return change(http.StatusOK, microstore.Assign(seg[1], req.Classes))
		}
	}
	return errorf(http.StatusNotFound, CodeNotFound, "no such admin resource %q", r.URL.Path)
}

func decodeBody(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return errorf(http.StatusBadRequest, CodeInvalidArgument, "request document: %v", err)
	}
	return nil
}

// microstoreError maps a change's errors onto the API's.
func microstoreError(err error) error {
	switch {
	case errors.Is(err, microstore.ErrNotFound):
		return errorf(http.StatusNotFound, CodeNoSuchMicrostore, "%v", err)
	case errors.Is(err, microstore.ErrExists), errors.Is(err, microstore.ErrConflicts):
		return errorf(http.StatusConflict, CodeMicrostoreConflict, "%v", err)
	case errors.Is(err, microstore.ErrInvalid):
		return errorf(http.StatusBadRequest, CodeInvalidArgument, "%v", err)
	case errors.Is(err, meta.ErrUnavailable):
		return errorf(http.StatusServiceUnavailable, CodeServiceUnavailable, "%v", err)
	}
	return err
}

// Microstores returns the cluster's microstores' description.
func (c *Client) Microstores(ctx context.Context) (microstore.Description, error) {
	var d microstore.Description
	err := c.do(ctx, http.MethodGet, "microstores", nil, &d)
	return d, err
}

// Microstore returns one microstore.
func (c *Client) Microstore(ctx context.Context, name string) (microstore.Microstore, error) {
	var m microstore.Microstore
	err := c.do(ctx, http.MethodGet, "microstores/"+url.PathEscape(name), nil, &m)
	return m, err
}

// CreateMicrostore adds a microstore and returns the description it made.
func (c *Client) CreateMicrostore(ctx context.Context, m microstore.Microstore) (microstore.Description, error) {
	var d microstore.Description
	err := c.do(ctx, http.MethodPost, "microstores", m, &d)
	return d, err
}

// ResizeMicrostore gives a microstore the proxies given.
func (c *Client) ResizeMicrostore(ctx context.Context, name string, proxies []string) (microstore.Description, error) {
	var d microstore.Description
	err := c.do(ctx, http.MethodPut, "microstores/"+url.PathEscape(name)+"/proxies", ProxiesRequest{Proxies: proxies}, &d)
	return d, err
}

// AssignMicrostore makes a microstore the one new buckets of the classes given go to.
func (c *Client) AssignMicrostore(ctx context.Context, name string, classes []workload.Class) (microstore.Description, error) {
	var d microstore.Description
	err := c.do(ctx, http.MethodPut, "microstores/"+url.PathEscape(name)+"/classes", ClassesRequest{Classes: classes}, &d)
	return d, err
}

// DeleteMicrostore removes a microstore.
func (c *Client) DeleteMicrostore(ctx context.Context, name string) (microstore.Description, error) {
	var d microstore.Description
	err := c.do(ctx, http.MethodDelete, "microstores/"+url.PathEscape(name), nil, &d)
	return d, err
}

// MicrostoreBuckets returns the cluster's buckets with their microstores.
func (c *Client) MicrostoreBuckets(ctx context.Context) (BucketList, error) {
	var l BucketList
	err := c.do(ctx, http.MethodGet, "microstore-buckets", nil, &l)
	return l, err
}

// MicrostorePlan returns what the resource manager would do now, and why.
func (c *Client) MicrostorePlan(ctx context.Context) (rmanager.Plan, error) {
	var p rmanager.Plan
	err := c.do(ctx, http.MethodGet, "microstore-plan", nil, &p)
	return p, err
}

// SetMicrostorePool makes the proxies given the free pool the resource manager gives from.
func (c *Client) SetMicrostorePool(ctx context.Context, proxies []string) (microstore.Description, error) {
	var d microstore.Description
	err := c.do(ctx, http.MethodPut, "microstore-pool", ProxiesRequest{Proxies: proxies}, &d)
	return d, err
}
