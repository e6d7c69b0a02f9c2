// Package nodeclienttest is the conformance test of the node contract: every implementation of
// nodeclient.Client (the storage node called in-process, the HTTP client of the node protocol)
// runs the same cases and must give the same answers.
package nodeclienttest

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
)

// Target is a client under test and the device it serves; the container listing of the
// objects written lives on the same device (Update names it), and so does the account listing
// of the containers created (Account names it).
type Target struct {
	Client  nodeclient.Client
	Device  string
	Update  *nodeclient.ContainerUpdate
	Account *nodeclient.AccountUpdate
	// Other names an account replica on another device of the same node, which Client also
	// serves, for containers whose account row lives elsewhere.
	Other *nodeclient.AccountUpdate
	// Flush runs the node's updater once (pending updates, and the usage of containers whose
	// account row is elsewhere).
	Flush func()
}

// Updates is the listing a write updates, as the options of a write name it.
func (tg Target) Updates() []nodeclient.ContainerUpdate {
	if tg.Update == nil {
		return nil
	}
	return []nodeclient.ContainerUpdate{*tg.Update}
}

// Run runs every case against a fresh target from open.
func Run(t *testing.T, open func(t *testing.T) Target) {
	cases := []struct {
		name string
		run  func(t *testing.T, tg Target)
	}{
		{"ObjectRoundTrip", objectRoundTrip},
		{"RangesAndConflicts", rangesAndConflicts},
		{"Conditions", conditions},
		{"BeforeCommit", beforeCommit},
		{"ShortBody", shortBody},
		{"Manifest", manifest},
		{"DeleteAndPost", deleteAndPost},
		{"Containers", containers},
		{"ListingRows", listingRows},
		{"ListingTombstones", listingTombstones},
		{"DeleteOfMissingObject", deleteOfMissingObject},
		{"AccountRowHere", accountRowHere},
		{"AccountRowElsewhere", accountRowElsewhere},
		{"AccountRowsNewestWins", accountRowsNewestWins},
		{"ReservedNames", reservedNames},
		{"PutAccount", putAccount},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

const account = "acct"

func mustCreate(t *testing.T, tg Target, container string) {
	t.Helper()
	c := meta.Container{Name: container, Created: meta.Now(), Meta: map[string]string{"sys:k": "v"}}
	if err := tg.Client.PutContainer(context.Background(), tg.Device, tg.Update.Part, account, c, nodeclient.ContainerOptions{Account: tg.Account}); err != nil {
		t.Fatalf("create container %q: %v", container, err)
	}
}

func put(t *testing.T, tg Target, object string, obj meta.Object, data []byte) nodeclient.PutResult {
	t.Helper()
	if obj.Timestamp == 0 {
		obj.Timestamp = meta.Now()
	}
	obj.Size = int64(len(data))
	res, err := tg.Client.PutObject(context.Background(), tg.Device, 0, meta.ObjectName{Account: account, Container: "box", Object: object}, obj, bytes.NewReader(data), nodeclient.PutOptions{Containers: tg.Updates()})
	if err != nil {
		t.Fatalf("put %q: %v", object, err)
	}
	return res
}

func name(object string) meta.ObjectName {
	return meta.ObjectName{Account: account, Container: "box", Object: object}
}

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

func get(t *testing.T, tg Target, object string, rng *meta.Range) (*nodeclient.ObjectReader, []byte) {
	t.Helper()
	r, err := tg.Client.GetObject(context.Background(), tg.Device, 0, name(object), rng)
	if err != nil {
		t.Fatalf("get %q: %v", object, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("get %q: reading: %v", object, err)
	}
	return r, b
}

func objectRoundTrip(t *testing.T, tg Target) {
	mustCreate(t, tg, "box")
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16+3) // over 1 MiB: a data file
	for _, tc := range []struct {
		object string
		data   []byte
	}{{"empty", nil}, {"small", []byte("hello")}, {"dir/with spaces/%20 ünïcode?&#", big}} {
		obj := meta.Object{
			ContentType: "text/plain; charset=utf-8",
			Headers:     map[string]string{"Content-Disposition": `attachment; filename="a b"`, "Cache-Control": "no-cache"},
			UserMeta:    map[string]string{"color": "blue", "Mixed-Case_Key": " spaced value % with escapes \t"},
			SysMeta:     map[string]string{"sys:checksum-crc32": "abc=", "listing-etag": "x; slo_etag=y"},
		}
		res := put(t, tg, tc.object, obj, tc.data)
		if res.Object.Size != int64(len(tc.data)) || res.Object.ETag != md5hex(tc.data) {
			t.Errorf("%q: put answered size %d etag %q, want %d %q", tc.object, res.Object.Size, res.Object.ETag, len(tc.data), md5hex(tc.data))
		}
		r, b := get(t, tg, tc.object, nil)
		if !bytes.Equal(b, tc.data) {
			t.Fatalf("%q: read %d bytes, want %d", tc.object, len(b), len(tc.data))
		}
		head, err := tg.Client.HeadObject(context.Background(), tg.Device, 0, name(tc.object), nodeclient.HeadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range []meta.Object{r.Object, head} {
			if got.Timestamp != res.Object.Timestamp || got.Size != int64(len(tc.data)) || got.ETag != md5hex(tc.data) || got.ContentType != obj.ContentType {
				t.Errorf("%q: read back ts %d size %d etag %q type %q; put %d", tc.object, got.Timestamp, got.Size, got.ETag, got.ContentType, res.Object.Timestamp)
			}
			for what, pair := range map[string][2]map[string]string{"headers": {got.Headers, obj.Headers}, "user": {got.UserMeta, obj.UserMeta}, "sys": {got.SysMeta, obj.SysMeta}} {
				if !sameMap(pair[0], pair[1]) {
					t.Errorf("%q: %s metadata %q, want %q", tc.object, what, pair[0], pair[1])
				}
			}
		}
	}
	l, err := tg.Client.ListObjects(context.Background(), tg.Device, tg.Update.Part, account, "box", meta.ListOptions{})
	if err != nil || len(l.Objects) != 3 {
		t.Fatalf("listing %+v, %v; want 3 objects", l, err)
	}
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func rangesAndConflicts(t *testing.T, tg Target) {
	mustCreate(t, tg, "box")
	data := []byte("0123456789")
	first := put(t, tg, "o", meta.Object{}, data)
	for _, c := range []struct {
		rng  meta.Range
		want string
		off  int64
	}{{meta.Range{Start: 2, End: 4}, "234", 2}, {meta.Range{Start: 7, End: -1}, "789", 7}, {meta.Range{Suffix: 2}, "89", 8}} {
		r, b := get(t, tg, "o", &c.rng)
		if string(b) != c.want || r.Offset != c.off || r.Length != int64(len(c.want)) || r.Object.Size != 10 {
			t.Errorf("range %+v: %q at %d+%d of %d, want %q at %d", c.rng, b, r.Offset, r.Length, r.Object.Size, c.want, c.off)
		}
	}
	if _, err := tg.Client.GetObject(context.Background(), tg.Device, 0, name("o"), &meta.Range{Start: 20, End: -1}); !errors.Is(err, meta.ErrInvalidRange) {
		t.Errorf("range past the end: %v, want ErrInvalidRange", err)
	}
	// bytes=-0 (as the Swift front end parses it) selects nothing.
	if _, err := tg.Client.GetObject(context.Background(), tg.Device, 0, name("o"), &meta.Range{Start: -1, End: -1}); !errors.Is(err, meta.ErrInvalidRange) {
		t.Errorf("an empty suffix range: %v, want ErrInvalidRange", err)
	}
	second := put(t, tg, "o", meta.Object{}, []byte("new"))
	if second.Previous == nil || second.Previous.Timestamp != first.Object.Timestamp {
		t.Errorf("overwrite's previous version %+v, want ts %d", second.Previous, first.Object.Timestamp)
	}
	_, err := tg.Client.PutObject(context.Background(), tg.Device, 0, name("o"), meta.Object{Timestamp: first.Object.Timestamp - 1, Size: 3}, strings.NewReader("old"), nodeclient.PutOptions{Containers: tg.Updates()})
	if !errors.Is(err, meta.ErrConflict) {
		t.Errorf("older write: %v, want ErrConflict", err)
	}
	if _, b := get(t, tg, "o", nil); string(b) != "new" {
		t.Errorf("after a refused older write: %q", b)
	}
	if _, err := tg.Client.HeadObject(context.Background(), tg.Device, 0, name("missing"), nodeclient.HeadOptions{}); !errors.Is(err, meta.ErrNotFound) {
		t.Errorf("head of a missing object: %v", err)
	}
}

func conditions(t *testing.T, tg Target) {
	mustCreate(t, tg, "box")
	ctx := context.Background()
	putIf := func(cond meta.Precondition, data string) error {
		_, err := tg.Client.PutObject(ctx, tg.Device, 0, name("c"), meta.Object{Timestamp: meta.Now(), Size: int64(len(data))}, strings.NewReader(data), nodeclient.PutOptions{If: cond, Containers: tg.Updates()})
		return err
	}
	if err := putIf(meta.Precondition{IfNoneMatch: true}, "one"); err != nil {
		t.Fatalf("first If-None-Match put: %v", err)
	}
	if err := putIf(meta.Precondition{IfNoneMatch: true}, "two"); !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Errorf("second If-None-Match put: %v, want ErrPreconditionFailed", err)
	}
	if err := putIf(meta.Precondition{IfMatch: []string{"nope", md5hex([]byte("one"))}}, "three"); err != nil {
		t.Errorf("If-Match with the right ETag: %v", err)
	}
	if err := putIf(meta.Precondition{IfMatch: []string{"nope"}}, "four"); !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Errorf("If-Match with a wrong ETag: %v", err)
	}
	if _, b := get(t, tg, "c", nil); string(b) != "three" {
		t.Errorf("after conditional writes: %q", b)
	}
	_, err := tg.Client.DeleteObject(ctx, tg.Device, 0, name("c"), meta.Now(), nodeclient.DeleteOptions{If: meta.Precondition{IfDeleteAt: 12345}, Containers: tg.Updates()})
	if !errors.Is(err, meta.ErrPreconditionFailed) {
		t.Errorf("delete with a wrong X-If-Delete-At: %v", err)
	}
}

func beforeCommit(t *testing.T, tg Target) {
	mustCreate(t, tg, "box")
	ctx := context.Background()
	data := []byte("checked body")
	var seen meta.Object
	opts := nodeclient.PutOptions{Containers: tg.Updates(), BeforeCommit: func(o *meta.Object) error {
		seen = *o
		if o.SysMeta == nil {
			o.SysMeta = map[string]string{}
		}
		o.SysMeta["verified"] = "sha256=xyz"
		return nil
	}}
	if _, err := tg.Client.PutObject(ctx, tg.Device, 0, name("bc"), meta.Object{Timestamp: meta.Now(), Size: -1}, bytes.NewReader(data), opts); err != nil {
		t.Fatal(err)
	}
	if seen.Size != int64(len(data)) || seen.ETag != md5hex(data) {
		t.Errorf("BeforeCommit saw size %d etag %q", seen.Size, seen.ETag)
	}
	head, err := tg.Client.HeadObject(ctx, tg.Device, 0, name("bc"), nodeclient.HeadOptions{})
	if err != nil || head.SysMeta["verified"] != "sha256=xyz" || head.Size != int64(len(data)) {
		t.Errorf("after BeforeCommit: %+v, %v", head, err)
	}
	refuse := errors.New("checksum mismatch")
	opts.BeforeCommit = func(*meta.Object) error { return refuse }
	_, err = tg.Client.PutObject(ctx, tg.Device, 0, name("bc"), meta.Object{Timestamp: meta.Now(), Size: 3}, strings.NewReader("bad"), opts)
	if err == nil {
		t.Fatal("a PUT whose BeforeCommit fails succeeded")
	}
	if _, b := get(t, tg, "bc", nil); !bytes.Equal(b, data) {
		t.Errorf("a refused PUT changed the object: %q", b)
	}
}

func shortBody(t *testing.T, tg Target) {
	mustCreate(t, tg, "box")
	ctx := context.Background()
	_, err := tg.Client.PutObject(ctx, tg.Device, 0, name("short"), meta.Object{Timestamp: meta.Now(), Size: 10}, strings.NewReader("abc"), nodeclient.PutOptions{Containers: tg.Updates()})
	if !errors.Is(err, meta.ErrIncompleteBody) {
		t.Errorf("short body: %v, want ErrIncompleteBody", err)
	}
	_, err = tg.Client.PutObject(ctx, tg.Device, 0, name("long"), meta.Object{Timestamp: meta.Now(), Size: 2}, strings.NewReader("abc"), nodeclient.PutOptions{Containers: tg.Updates()})
	if !errors.Is(err, meta.ErrBodyTooLong) {
		t.Errorf("long body: %v, want ErrBodyTooLong", err)
	}
	failing := io.MultiReader(strings.NewReader("abc"), errReader{})
	if _, err = tg.Client.PutObject(ctx, tg.Device, 0, name("broken"), meta.Object{Timestamp: meta.Now(), Size: -1}, failing, nodeclient.PutOptions{Containers: tg.Updates()}); err == nil {
		t.Error("a body that fails was stored")
	}
	for _, o := range []string{"short", "long", "broken"} {
		if _, err := tg.Client.HeadObject(ctx, tg.Device, 0, name(o), nodeclient.HeadOptions{}); !errors.Is(err, meta.ErrNotFound) {
			t.Errorf("%s: a failed PUT left something: %v", o, err)
		}
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("client vanished") }

func manifest(t *testing.T, tg Target) {
	mustCreate(t, tg, "box")
	ctx := context.Background()
	segs := []meta.Segment{{Container: "segs", Object: "p1", Size: 5, ETag: "e1"}, {Container: "segs", Object: "p2", Size: 7, ETag: "e2", Ranged: true, Offset: 1, Length: 3}, {Data: []byte("inline")}}
	obj := meta.Object{Timestamp: meta.Now(), Manifest: segs, SysMeta: map[string]string{meta.SysManifestETag: "m-etag"}}
	if _, err := tg.Client.PutObject(ctx, tg.Device, 0, name("m"), obj, nil, nodeclient.PutOptions{Containers: tg.Updates()}); err != nil {
		t.Fatal(err)
	}
	r, _ := get(t, tg, "m", &meta.Range{Start: 1, End: 2})
	if len(r.Object.Manifest) != 3 || r.Object.Manifest[1].Length != 3 || string(r.Object.Manifest[2].Data) != "inline" || r.Object.AsServed().Size != 5+3+6 {
		t.Errorf("manifest read back %+v", r.Object.Manifest)
	}
	head, err := tg.Client.HeadObject(ctx, tg.Device, 0, name("m"), nodeclient.HeadOptions{})
	if err != nil || len(head.Manifest) != 3 {
		t.Errorf("HEAD of a manifest: %+v, %v", head, err)
	}
	brief, err := tg.Client.HeadObject(ctx, tg.Device, 0, name("m"), nodeclient.HeadOptions{Brief: true})
	if err != nil || !brief.IsManifest() || brief.SegmentCount() != 3 || brief.AsServed().Size != 14 || brief.AsServed().ETag != "m-etag" {
		t.Errorf("brief HEAD of a manifest: %+v, %v", brief, err)
	}
}

func deleteAndPost(t *testing.T, tg Target) {
	mustCreate(t, tg, "box")
	ctx := context.Background()
	put(t, tg, "d", meta.Object{ContentType: "a/b", SysMeta: map[string]string{"keep": "1"}}, []byte("data"))
	upd := meta.Object{Timestamp: meta.Now(), ContentType: "c/d", UserMeta: map[string]string{"new": "yes"}, SysMeta: map[string]string{"added": "2"}}
	o, err := tg.Client.PostObject(ctx, tg.Device, 0, name("d"), upd, nodeclient.PostOptions{Containers: tg.Updates()})
	if err != nil || o.ContentType != "c/d" || o.UserMeta["new"] != "yes" || o.SysMeta["keep"] != "1" || o.SysMeta["added"] != "2" || o.Size != 4 {
		t.Errorf("post: %+v, %v", o, err)
	}
	prev, err := tg.Client.DeleteObject(ctx, tg.Device, 0, name("d"), meta.Now(), nodeclient.DeleteOptions{Containers: tg.Updates()})
	if err != nil || prev.Size != 4 {
		t.Errorf("delete: previous %+v, %v", prev, err)
	}
	if _, err := tg.Client.GetObject(ctx, tg.Device, 0, name("d"), nil); !errors.Is(err, meta.ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
	if _, err := tg.Client.DeleteObject(ctx, tg.Device, 0, name("d"), meta.Now(), nodeclient.DeleteOptions{Containers: tg.Updates()}); !errors.Is(err, meta.ErrNotFound) {
		t.Errorf("second delete: %v, want ErrNotFound", err)
	}
}

func containers(t *testing.T, tg Target) {
	ctx := context.Background()
	part := tg.Update.Part
	mustCreate(t, tg, "box")
	err := tg.Client.PutContainer(ctx, tg.Device, part, account, meta.Container{Name: "box", Created: meta.Now()}, nodeclient.ContainerOptions{Account: tg.Account})
	if !errors.Is(err, meta.ErrExists) {
		t.Errorf("second create: %v, want ErrExists", err)
	}
	c, err := tg.Client.PostContainer(ctx, tg.Device, part, account, "box", map[string]string{"sys:acl": "a:b", "sys:k": ""})
	if err != nil || c.Meta["sys:acl"] != "a:b" || c.Meta["sys:k"] != "" {
		t.Errorf("post container: %+v, %v", c, err)
	}
	for _, o := range []string{"a/1", "a/2", "b", "c"} {
		put(t, tg, o, meta.Object{}, []byte(o))
	}
	c, err = tg.Client.HeadContainer(ctx, tg.Device, part, account, "box")
	if err != nil || c.ObjectCount != 4 || c.BytesUsed != 3+3+1+1 || c.Meta["sys:acl"] != "a:b" || c.Created == 0 {
		t.Errorf("head container: %+v, %v", c, err)
	}
	l, err := tg.Client.ListObjects(ctx, tg.Device, part, account, "box", meta.ListOptions{Delimiter: "/", Limit: 2})
	if err != nil || len(l.CommonPrefixes) != 1 || l.CommonPrefixes[0] != "a/" || len(l.Objects) != 1 || l.Objects[0].Name != "b" || !l.Truncated || l.NextMarker != "b" {
		t.Errorf("listing page: %+v, %v", l, err)
	}
	l, err = tg.Client.ListObjects(ctx, tg.Device, part, account, "box", meta.ListOptions{Marker: "b"})
	if err != nil || len(l.Objects) != 1 || l.Objects[0].Name != "c" || l.Truncated || l.Objects[0].Size != 1 || l.Objects[0].ETag != md5hex([]byte("c")) || l.Objects[0].Timestamp == 0 {
		t.Errorf("second page: %+v, %v", l, err)
	}
	if err := tg.Client.DeleteContainer(ctx, tg.Device, part, account, "box", meta.Now(), nodeclient.ContainerOptions{Account: tg.Account}); !errors.Is(err, meta.ErrNotEmpty) {
		t.Errorf("delete of a full container: %v", err)
	}
	mustCreate(t, tg, "other")
	cl, err := tg.Client.ListContainers(ctx, tg.Device, part, account, meta.ListOptions{})
	if err != nil || len(cl.Containers) != 2 || cl.Containers[0].Name != "box" || cl.Containers[0].ObjectCount != 4 {
		t.Errorf("account listing: %+v, %v", cl, err)
	}
	a, err := tg.Client.HeadAccount(ctx, tg.Device, part, account)
	if err != nil || a.ContainerCount != 2 || a.ObjectCount != 4 || a.BytesUsed != 8 {
		t.Errorf("account: %+v, %v", a, err)
	}
	if err := tg.Client.DeleteContainer(ctx, tg.Device, part, account, "other", meta.Now(), nodeclient.ContainerOptions{Account: tg.Account}); err != nil {
		t.Errorf("delete of an empty container: %v", err)
	}
	if _, err := tg.Client.HeadContainer(ctx, tg.Device, part, account, "other"); !errors.Is(err, meta.ErrNotFound) {
		t.Errorf("head of a deleted container: %v", err)
	}
}

func listingRows(t *testing.T, tg Target) {
	ctx := context.Background()
	part := tg.Update.Part
	mustCreate(t, tg, "box")
	ts := meta.Now()
	e := meta.ListEntry{Name: "row", Timestamp: ts, Size: 42, ETag: "etag", ContentType: "x/y"}
	if err := tg.Client.UpdateListing(ctx, tg.Device, part, account, "box", e, false); err != nil {
		t.Fatal(err)
	}
	older := e
	older.Timestamp, older.Size = ts-1, 1
	if err := tg.Client.UpdateListing(ctx, tg.Device, part, account, "box", older, false); err != nil {
		t.Fatal(err)
	}
	l, err := tg.Client.ListObjects(ctx, tg.Device, part, account, "box", meta.ListOptions{})
	if err != nil || len(l.Objects) != 1 || l.Objects[0] != e {
		t.Errorf("after rows: %+v, %v; want %+v", l, err, e)
	}
	if err := tg.Client.UpdateListing(ctx, tg.Device, part, account, "box", meta.ListEntry{Name: "row", Timestamp: meta.Now()}, true); err != nil {
		t.Fatal(err)
	}
	if c, err := tg.Client.HeadContainer(ctx, tg.Device, part, account, "box"); err != nil || c.ObjectCount != 0 || c.BytesUsed != 0 {
		t.Errorf("after the delete row: %+v, %v", c, err)
	}
	if err := tg.Client.UpdateListing(ctx, tg.Device, part, account, "nobox", e, false); !errors.Is(err, meta.ErrNotFound) {
		t.Errorf("row for a missing container: %v", err)
	}
}
