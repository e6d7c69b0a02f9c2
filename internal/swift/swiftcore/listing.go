package swiftcore

import (
	"net/http"
	"strconv"

	"github.com/cairn-store/cairn/internal/swift/swiftwire"
)

// WriteListing answers a listing GET or HEAD. An empty plain-text listing is 204, as in Swift;
// JSON and XML always have a body.
func WriteListing(w http.ResponseWriter, r *http.Request, lr swiftwire.ListRequest, kind, name, account string, items []swiftwire.ListItem) {
	body := swiftwire.RenderListing(lr.Format, kind, name, account, items)
	hdr := w.Header()
	hdr.Set("Content-Type", lr.ContentType+"; charset=utf-8")
	hdr.Set("Accept-Ranges", "bytes")
	if lr.Vary {
		hdr.Set("Vary", "Accept") // the format came from Accept: caches must key on it
	}
	status := http.StatusOK
	if len(body) == 0 {
		status = http.StatusNoContent
		hdr.Set("Content-Length", "0")
	} else {
		hdr.Set("Content-Length", strconv.Itoa(len(body)))
	}
	if r.Method == http.MethodHead {
		// Swift answers HEAD with 204 and no body.
		hdr.Set("Content-Length", "0")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.WriteHeader(status)
	w.Write(body)
}
