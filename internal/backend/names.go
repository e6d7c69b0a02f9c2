package backend

import (
	"fmt"
	"strings"

	"github.com/cairn-store/cairn/internal/meta"
)

// Names on the wire are Swift's, so that a Cairn proxy works over Swift's storage servers and
// finds an existing Swift cluster's data, while Cairn's nodes keep storing the names they always
// have: the client maps Cairn's names onto Swift's, the handler maps them back.
//
//   - Accounts: a client account "a" is Swift's "AUTH_a" (meta.SwiftAccount); Cairn's reserved
//     accounts ("\x00…") are in Swift's reserved namespace as they are.
//   - Objects of a reserved container ("\x00…", such as an S3 bucket's multipart uploads) start
//     with "\x00" on the wire (meta.SwiftObject), since Swift 2.30 keeps a reserved container's
//     objects in the reserved namespace too (swift.common.request_helpers
//     .validate_internal_obj): Cairn names them "<key>\x00<upload>…", which Swift refuses.
//     Prefixing every name of such a container keeps their order, so listings, markers and
//     prefixes map one to one, and a node that holds uploads under Cairn's names keeps them.
//
// Container names are the same on both sides: Cairn's reserved containers are valid reserved
// names of Swift's.

// wirePath is the path of a request about an account, container or object named as Cairn's
// nodes name them.
func wirePath(device string, part uint32, account, container, object string) Path {
	p := Path{Device: device, Part: part, Account: meta.SwiftAccount(account), Container: container}
	if object != "" {
		p.Object = wireObject(container, object)
	}
	return p
}

// isReserved reports whether a container is in the reserved namespace.
func isReserved(container string) bool { return strings.HasPrefix(container, meta.ReservedPrefix) }

func wireObject(container, object string) string { return meta.SwiftObject(container, object) }

func nodeObject(container, wire string) (string, bool) { return meta.ObjectFromSwift(container, wire) }

// fromWire maps a parsed request path onto Cairn's names.
func (p Path) fromWire() (Path, error) {
	account, ok := meta.AccountFromSwift(p.Account)
	if !ok {
		return Path{}, fmt.Errorf("%w: account %q is neither %s-prefixed nor reserved", ErrBadRequest, p.Account, meta.ResellerPrefix)
	}
	p.Account = account
	if p.Object != "" {
		if p.Object, ok = nodeObject(p.Container, p.Object); !ok || p.Object == "" {
			return Path{}, fmt.Errorf("%w: object %q of a reserved container outside the reserved namespace", ErrBadRequest, p.Object)
		}
	}
	return p, nil
}

// wireListOptions maps a listing's names (prefix and markers) of a container onto the wire.
func wireListOptions(container string, opts meta.ListOptions) meta.ListOptions {
	if !isReserved(container) {
		return opts
	}
	opts.Prefix = wireObject(container, opts.Prefix)
	if opts.Marker != "" {
		opts.Marker = wireObject(container, opts.Marker)
	}
	if opts.EndMarker != "" {
		opts.EndMarker = wireObject(container, opts.EndMarker)
	}
	return opts
}

// nodeListOptions is the inverse of wireListOptions.
func nodeListOptions(container string, opts meta.ListOptions) (meta.ListOptions, error) {
	if !isReserved(container) {
		return opts, nil
	}
	var ok1, ok2, ok3 bool
	opts.Prefix, ok1 = nodeObject(container, opts.Prefix)
	ok1 = ok1 || opts.Prefix == ""
	opts.Marker, ok2 = nodeObject(container, opts.Marker)
	ok2 = ok2 || opts.Marker == ""
	opts.EndMarker, ok3 = nodeObject(container, opts.EndMarker)
	ok3 = ok3 || opts.EndMarker == ""
	if !ok1 || !ok2 || !ok3 {
		return opts, fmt.Errorf("%w: listing names of a reserved container outside the reserved namespace", ErrBadRequest)
	}
	return opts, nil
}

// nodeListing maps a page of a container's listing, as the wire has it, onto Cairn's names.
func nodeListing(container string, l *meta.ObjectListing) error {
	if !isReserved(container) {
		return nil
	}
	var ok bool
	for i := range l.Objects {
		if l.Objects[i].Name, ok = nodeObject(container, l.Objects[i].Name); !ok {
			return fmt.Errorf("backend: listing of %q: object %q outside the reserved namespace: %w", container, l.Objects[i].Name, meta.ErrCorrupt)
		}
	}
	for i := range l.CommonPrefixes {
		if l.CommonPrefixes[i], ok = nodeObject(container, l.CommonPrefixes[i]); !ok {
			return fmt.Errorf("backend: listing of %q: prefix %q outside the reserved namespace: %w", container, l.CommonPrefixes[i], meta.ErrCorrupt)
		}
	}
	if l.NextMarker != "" {
		l.NextMarker, _ = nodeObject(container, l.NextMarker)
	}
	return nil
}

// wireListing is the inverse of nodeListing, for the handler's answer.
func wireListing(container string, l *meta.ObjectListing) {
	if !isReserved(container) {
		return
	}
	objs := make([]meta.ListEntry, len(l.Objects))
	for i, e := range l.Objects {
		e.Name = wireObject(container, e.Name)
		objs[i] = e
	}
	prefixes := make([]string, len(l.CommonPrefixes))
	for i, p := range l.CommonPrefixes {
		prefixes[i] = wireObject(container, p)
	}
	l.Objects, l.CommonPrefixes = objs, prefixes
	if l.NextMarker != "" {
		l.NextMarker = wireObject(container, l.NextMarker)
	}
}
