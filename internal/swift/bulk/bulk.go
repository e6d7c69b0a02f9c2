// Package bulk is Swift's bulk middleware: bulk delete (POST or DELETE ?bulk-delete on any path
// of an account: the body lists the objects and containers to delete, each decided as its own
// DELETE) and bulk upload (PUT ?extract-archive=tar|tar.gz|tar.bz2: each regular file of the
// archive becomes an object, made as a subrequest through the whole front end with the caller's
// token, through swiftcore.Server.Serve, as Swift makes them through its pipeline). Both answer
// in the middleware's format (plain text, JSON or XML), which static large objects' deletes
// share (Result).
//
// Files: bulk.go (bulk delete and the answer format), extract.go (bulk upload).
package bulk

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-store/cairn/internal/access"
	"github.com/cairn-store/cairn/internal/httpwire"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/swift/swiftcore"
	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// Bulk delete (Swift's bulk middleware, ?bulk-delete), limits as Swift's defaults.
const (
	MaxDeletesPerRequest = 10000
	MaxFailedDeletes     = 1000
	// maxBulkLine bounds one line of a bulk-delete body: a URL-encoded /container/object may
	// triple the bytes of the names.
	maxBulkLine = 3 * (swiftwire.MaxContainerNameLength + swiftwire.MaxObjectNameLength + 2)
)

// Result is the outcome of a bulk delete (or of an SLO delete, which answers alike).
type Result struct {
	deleted, notFound int
	failed            [][2]string // path, status line
	status            string      // "" means 200 OK, or 400 Bad Request when some failed
	body              string      // Response Body: why the whole request stopped
}

// Answer answers the result in the bulk middleware's format.
func (b *Result) Answer(w http.ResponseWriter, r *http.Request) {
	status := b.status
	if status == "" {
		status = "200 OK"
		if len(b.failed) > 0 {
			status = "400 Bad Request"
		}
	}
	writeBulkAnswer(w, r, "delete", map[string]any{"Number Deleted": b.deleted, "Number Not Found": b.notFound,
		"Response Body": b.body, "Response Status": status}, b.failed)
}

// writeBulkAnswer answers a bulk request (delete or extract) in the bulk middleware's format:
// the fields in name order and the failures, as plain text, or JSON or XML when the client
// accepts them (python-swiftclient asks for JSON). The status line is always 200, as in Swift,
// whose answer starts before the work is done; the outcome is in the body.
func writeBulkAnswer(w http.ResponseWriter, r *http.Request, root string, fields map[string]any, failed [][2]string) {
	body, ct := swiftwire.BulkBody(r.Header.Get("Accept"), root, fields, failed)
	hdr := w.Header()
	hdr.Set("Content-Type", ct)
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// Record counts the outcome of one delete.
func (b *Result) Record(path string, err error) {
	switch {
	case err == nil:
		b.deleted++
	case errors.Is(err, meta.ErrNotFound):
		b.notFound++
	default:
		b.failed = append(b.failed, [2]string{path, swiftcore.ToError(err).StatusLine()})
	}
}

// BulkDelete serves POST (or DELETE) /v1/<account>?bulk-delete: the body lists one URL-encoded
// /container/object or /container per line; objects are deleted, containers only when empty.
func (h *Handler) Delete(w http.ResponseWriter, r *http.Request, rq *swiftcore.Request) error {
	ctx := r.Context()
	var res Result
	sc := bufio.NewScanner(r.Body)
	sc.Buffer(make([]byte, 0, 4096), maxBulkLine)
	// Like Swift, whose answer starts before the body is read, a request refused as a whole is
	// still a 200 whose body names the status.
	var paths []string
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if len(paths) == MaxDeletesPerRequest {
			res.status, res.body = "413 Request Entity Too Large", fmt.Sprintf("Maximum Bulk Deletes: %d per request", MaxDeletesPerRequest)
			res.Answer(w, r)
			return nil
		}
		paths = append(paths, line)
	}
	if err := sc.Err(); err != nil {
		if !errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("bulk delete: read body: %w", err)
		}
		res.status, res.body = "400 Bad Request", "Invalid File Name"
		res.Answer(w, r)
		return nil
	}
	if len(paths) == 0 {
		res.status, res.body = "400 Bad Request", "Invalid bulk delete."
		res.Answer(w, r)
		return nil
	}
	for _, p := range paths {
		if len(res.failed) >= MaxFailedDeletes {
			res.status, res.body = "400 Bad Request", "Max delete failures exceeded"
			break
		}
		name := httpwire.UnescapeLenient(p)
		c, o, _ := strings.Cut(strings.TrimPrefix(name, "/"), "/")
		if c == "" {
			res.failed = append(res.failed, [2]string{p, "400 Bad Request"})
			continue
		}
		err := swiftwire.CheckContainerName(c)
		if err == nil && o != "" {
			err = swiftwire.CheckObjectName(o)
		}
		if err != nil {
			res.failed = append(res.failed, [2]string{p, swiftcore.ToError(err).StatusLine()})
			continue
		}
		// Each item is decided as its own DELETE would be (Swift's bulk middleware makes
		// subrequests).
		if o == "" {
			if err := rq.RequireAdmin(rq.Tenant, "delete containers"); err != nil {
				res.failed = append(res.failed, [2]string{p, swiftcore.ToError(err).StatusLine()})
				continue
			}
			res.Record(p, h.Proxy.DeleteContainer(ctx, rq.Tenant, c))
		} else {
			if err := h.Allow(ctx, r, rq, rq.Tenant, c, o, access.DeleteObject); err != nil {
				res.failed = append(res.failed, [2]string{p, swiftcore.ToError(err).StatusLine()})
				continue
			}
			res.Record(p, h.Proxy.DeleteObject(ctx, meta.ObjectName{Account: rq.Tenant, Container: c, Object: o}))
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("bulk delete: %w", err)
		}
	}
	res.Answer(w, r)
	return nil
}

// Handler serves bulk requests; it shares the front end's state.
type Handler struct {
	*swiftcore.Server
}

// New returns the feature's handler over the shared state.
func New(s *swiftcore.Server) *Handler {
	return &Handler{Server: s}
}
