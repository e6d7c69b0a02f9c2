package backend

import (
	"context"
	"net/http"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// PostObject replaces an object's metadata, keeping its bytes, and merges update.SysMeta into
// its system metadata.
//
// A Swift object server keeps an object's X-Object-Sysmeta-* as its PUT wrote them, and a POST
// replaces its user metadata and its transient system metadata (X-Object-Transient-Sysmeta-*)
// whole. So to a Swift server the system metadata a POST changes travel as transient system
// metadata (objPostedPrefix), together with what earlier POSTs changed, which the client reads
// first; readObjectMeta lays them over the PUT's. A Cairn node merges them itself, in either
// form, and needs no read: the client tells it from a Swift server by hdrNode.
func (c *Client) PostObject(ctx context.Context, device string, part uint32, name meta.ObjectName, update meta.Object, opts nodeclient.PostOptions) (meta.Object, error) {
	var posted map[string]string
	cairn := c.cairn.Load()
	if !cairn {
		var err error
		if posted, err = c.postedSysMeta(ctx, device, part, name); err != nil {
			return meta.Object{}, err
		}
		cairn = c.cairn.Load() // the read's answer says what the node is
	}
	h := http.Header{}
	if cairn {
		writeObjectMeta(h, &update)
	} else {
		sys := update.SysMeta
		update.SysMeta = nil
		writeObjectMeta(h, &update)
		putMeta(h, objPostedPrefix+"M-", mergeMaps(posted, sys))
	}
	writeContainerUpdates(h, opts.Containers)
	writeCondition(h, opts.If)
	writeDecision(h, opts.DecidedGen, opts.Undecided)
	resp, err := c.do(ctx, call{method: http.MethodPost, path: objectPath(device, part, name), header: h})
	if err != nil {
		return meta.Object{}, err
	}
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusNoContent {
		return meta.Object{}, failed(resp, "post "+name.Object)
	}
	res := readResult(resp)
	reportListed(opts.Containers, res, opts.Listed)
	if res.Object != nil {
		return *res.Object, nil
	}
	return c.HeadObject(ctx, device, part, name, nodeclient.HeadOptions{})
}

// postedSysMeta returns the system metadata that earlier POSTs changed on a Swift server (none
// on a Cairn node, which merges them into the rest).
func (c *Client) postedSysMeta(ctx context.Context, device string, part uint32, name meta.ObjectName) (map[string]string, error) {
	h := http.Header{}
	h.Set(hdrBrief, "yes")
	resp, err := c.do(ctx, call{method: http.MethodHead, path: objectPath(device, part, name), header: h})
	if err != nil {
		return nil, err
	}
	drain(resp)
	if resp.StatusCode != http.StatusOK {
		return nil, errorFromResponse("head "+name.Object, resp.StatusCode, resp.Header.Get(hdrError), "")
	}
	posted := readMeta(resp.Header, objPostedPrefix+"M-")
	if posted == nil {
		posted = map[string]string{}
	}
	return posted, nil
}
