// Package internal_test holds the rules of how Cairn's packages may depend on each other, as a
// test, so that the architecture is enforced rather than hoped for.
package internal_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/cairn-store/cairn/"

// forbidden maps a package (relative to the module; a trailing "/..." covers its subpackages)
// to the imports it must never have, with the reason.
var forbidden = []struct {
	pkg     string
	imports []string
	why     string
}{
	{"internal/s3/...", []string{"internal/engine", "internal/index", "internal/storage", "internal/vfs", "github.com/cockroachdb/pebble"},
		"front ends never touch disks: they reach storage only through the proxy"},
	{"internal/swift/...", []string{"internal/engine", "internal/index", "internal/storage", "internal/vfs", "internal/s3", "internal/auth", "github.com/cockroachdb/pebble"},
		"front ends never touch disks: they reach storage only through the proxy (and never import each other or the tenant store: the server wires them)"},
	{"internal/s3/s3xml", []string{"internal/"},
		"S3's XML documents are types and encoders only: no HTTP handling, no errors of the front end, nothing of Cairn's"},
	{"internal/s3/tagging", []string{"internal/proxy", "internal/access", "internal/meta", "internal/auth", "internal/server", "internal/s3/sigv4", "internal/s3/checksum", "internal/s3/objattr"},
		"S3's tagging rules are pure: strings in, tag sets or refusals out (their documents are s3xml's); the front end stores and serves them"},
	{"internal/s3/objattr", []string{"internal/"},
		"GetObjectAttributes' request rules are pure: headers in, attributes and pages out"},
	{"internal/s3/lifecycle", []string{"internal/proxy", "internal/versions", "internal/access", "internal/auth", "internal/meta", "internal/server", "internal/nodeclient", "internal/swift"},
		"lifecycle rules are pure logic: the S3 front end and its daemon do the I/O"},
	{"internal/s3/cors", []string{"internal/proxy", "internal/access", "internal/auth", "internal/meta", "internal/server", "internal/nodeclient", "internal/swift", "internal/s3/sigv4", "internal/s3/checksum"},
		"S3's CORS rules are pure: a configuration and a request's origin, method and headers in, a rule or a refusal out; the front end stores and serves with them"},
	{"internal/s3/s3core", []string{"internal/s3/buckets", "internal/s3/objects", "internal/s3/multipart"},
		"the S3 core is what every handler needs (shared state, requests, errors, authentication, access decisions, validation): it never depends on a handler package; package s3 composes them (importing s3 from here would be a cycle)"},
	{"internal/s3/buckets", []string{"internal/s3/objects", "internal/s3/multipart"},
		"bucket operations and configuration share with the object data path only what package s3core holds"},
	{"internal/s3/objects", []string{"internal/s3/buckets", "internal/s3/multipart"},
		"the object data path reads bucket settings (default retention, default encryption, versioning) through package s3core, never through the bucket handlers; multipart builds on objects, not the reverse"},
	{"internal/s3/multipart", []string{"internal/s3/buckets"},
		"multipart uploads build on the object data path and package s3core, not on the bucket handlers"},
	{"internal/swift/swiftwire", []string{"internal/proxy", "internal/access", "internal/auth", "internal/server", "internal/nodeclient", "internal/swift"},
		"Swift's wire rules are pure: strings and headers in, values or refusals out; the front end serves with them"},
	{"internal/swift/swiftcore", []string{"internal/swift/largeobj", "internal/swift/versioning", "internal/swift/symlink", "internal/swift/bulk", "internal/swift/tempurl", "internal/swift/staticweb", "internal/server"},
		"the Swift front end's core is what every feature shares: it knows none of them (and cannot import internal/swift, which imports it), as Swift's proxy core knows none of its middlewares"},
	{"internal/swift/symlink", []string{"internal/swift/largeobj", "internal/swift/versioning", "internal/swift/bulk", "internal/swift/tempurl", "internal/swift/staticweb"},
		"symlinks are a feature of their own: they depend on the core only"},
	{"internal/swift/bulk", []string{"internal/swift/largeobj", "internal/swift/versioning", "internal/swift/symlink", "internal/swift/tempurl", "internal/swift/staticweb"},
		"bulk delete and upload depend on the core only: their subrequests go through the whole front end by the core's Serve hook"},
	{"internal/swift/largeobj", []string{"internal/swift/versioning", "internal/swift/tempurl", "internal/swift/staticweb"},
		"large objects depend on the core, on symlinks (a segment may be one) and on bulk's answer format (a manifest delete answers in it), never on versioning or the edge features"},
	{"internal/swift/versioning", []string{"internal/swift/symlink", "internal/swift/bulk", "internal/swift/tempurl", "internal/swift/staticweb"},
		"versioning depends on the core and on large objects (a version may be a manifest to delete) only"},
	{"internal/swift/tempurl", []string{"internal/swift/largeobj", "internal/swift/versioning", "internal/swift/symlink", "internal/swift/bulk", "internal/swift/staticweb"},
		"temp URLs are authentication at the edge: they depend on the core only"},
	{"internal/swift/staticweb", []string{"internal/swift/largeobj", "internal/swift/versioning", "internal/swift/symlink", "internal/swift/bulk", "internal/swift/tempurl"},
		"static web depends on the core only: it serves objects through the core's GetObject hook"},
	{"internal/proxy", []string{"internal/engine", "internal/index", "internal/storage", "internal/vfs", "internal/s3", "github.com/cockroachdb/pebble"},
		"the proxy talks to nodes only through nodeclient and never parses a client protocol"},
	{"internal/proxy/ecstream", []string{"internal/nodeclient", "internal/backend", "internal/ring", "internal/policy", "internal/proxy", "internal/engine", "internal/index", "internal/storage", "internal/vfs"},
		"the erasure-code streams of the proxy are pure of placement: they are told where archives are and never reach a node themselves"},
	{"internal/nodeclient", []string{"internal/engine", "internal/index", "internal/storage", "internal/proxy", "internal/s3"},
		"the node contract depends on the shared vocabulary only"},
	{"internal/backend", []string{"internal/engine", "internal/index", "internal/storage", "internal/proxy", "internal/s3", "internal/swift", "internal/server", "internal/auth", "github.com/cockroachdb/pebble"},
		"the node protocol carries the node contract over HTTP; it serves any nodeclient.Client and stores nothing itself"},
	{"internal/meta", []string{"internal/"},
		"the shared vocabulary depends on nothing of Cairn's"},
	{"internal/microstore", []string{"internal/proxy", "internal/server", "internal/auth", "internal/storage", "internal/engine", "internal/nodeclient", "internal/backend", "internal/s3", "internal/swift", "internal/admin"},
		"the microstores' description is a model and its rules, pure of I/O: the server keeps it in the cluster and serves its changes"},
	{"internal/rmanager", []string{"internal/proxy", "internal/server", "internal/auth", "internal/storage", "internal/engine", "internal/nodeclient", "internal/backend", "internal/s3", "internal/swift", "internal/admin"},
		"the resource manager decides from the description, the proxies' reports and the advisor's demands; the server gives it those sources"},
	{"internal/workload", []string{"internal/"},
		"the workload monitor is pure: observations and a clock in, figures and classes out; the front ends feed it and the server serves it"},
	{"internal/engine", []string{"internal/index", "internal/storage", "internal/proxy", "internal/s3", "internal/server"},
		"the engine stores objects on one device and knows nothing above it"},
	{"internal/index", []string{"internal/engine", "internal/storage", "internal/proxy", "internal/s3", "internal/server"},
		"the index keeps listings and knows nothing above it"},
	{"internal/storage", []string{"internal/proxy", "internal/s3", "internal/server", "internal/auth"},
		"a storage node serves devices; it does not route or authenticate"},
	{"internal/versions", []string{"internal/engine", "internal/index", "internal/storage", "internal/vfs", "internal/s3", "internal/swift", "internal/auth", "internal/server", "github.com/cockroachdb/pebble"},
		"the version store keeps versions through the proxy, for both front ends: it knows no client protocol and never touches a disk"},
	{"internal/lifecycled", []string{"internal/engine", "internal/index", "internal/storage", "internal/vfs", "internal/swift", "internal/auth", "internal/server", "internal/s3/sigv4", "internal/s3/s3xml", "github.com/cockroachdb/pebble"},
		"the lifecycle daemon reaches storage through the proxy and the version store, and S3's uploads through an interface the front end implements; it serves no client"},
	{"internal/advisor", []string{"internal/engine", "internal/index", "internal/storage", "internal/vfs", "internal/proxy", "internal/s3", "internal/swift", "internal/server", "internal/nodeclient", "internal/localcluster", "internal/objclient"},
		"the advisor's model and search are pure: catalog, demands and workload in, configurations out; only advisor/calibrate runs a cluster to measure"},
	{"internal/advisor/netlab", []string{"internal/"},
		"the lab network is namespaces, links and cgroups of this machine: it knows nothing of Cairn's, so that calibration and validation build the same one"},
	{"internal/advisor/validate", []string{"internal/engine", "internal/index", "internal/storage", "internal/vfs", "internal/proxy", "internal/s3", "internal/swift", "internal/server", "internal/nodeclient", "internal/advisor/calibrate"},
		"validate runs Cairn's processes as a user would (localcluster, bench over objclient) and predicts with the pure model; it reaches no node's internals"},
	{"internal/expirer", []string{"internal/engine", "internal/index", "internal/storage", "internal/vfs", "internal/s3", "internal/swift", "internal/auth", "github.com/cockroachdb/pebble"},
		"the expirer reaches storage only through the proxy, and knows no client protocol"},
	{"internal/auth", []string{"internal/proxy", "internal/nodeclient", "internal/backend", "internal/meta", "internal/storage", "internal/engine", "internal/index", "internal/vfs", "internal/s3", "internal/swift", "internal/admin", "internal/server", "github.com/cockroachdb/pebble"},
		"the tenant store keeps identities; in a cluster it keeps them in a Blob the server implements over the proxy, so that it knows nothing of how objects are stored"},
	{"internal/admin", []string{"internal/engine", "internal/index", "internal/storage", "internal/vfs", "internal/proxy", "internal/swift"},
		"the admin API manages tenants; usage reaches it through a function the server wires, never the data path"},
	{"internal/replicator", []string{"internal/engine", "internal/index", "internal/storage", "internal/vfs", "internal/proxy", "internal/s3", "internal/swift", "internal/server", "internal/auth", "github.com/cockroachdb/pebble"},
		"the replicator reaches its node's devices through the node contract and other nodes through the node protocol; it never opens a device itself"},
	{"internal/sse", []string{"internal/proxy", "internal/nodeclient", "internal/backend", "internal/engine", "internal/index", "internal/storage", "internal/vfs", "internal/s3", "internal/swift", "internal/auth", "internal/server", "internal/versions", "github.com/cockroachdb/pebble"},
		"encryption at rest is keys, a stream format and the reading of a range, shared by both front ends: it is handed bytes and metadata (the shared vocabulary) and reaches neither the proxy, a client protocol nor the tenant store (its KMS key store is an interface the server wires)"},
	{"internal/ec", []string{"internal/"},
		"erasure coding is pure: bytes in, fragments out"},
	{"internal/ring", []string{"internal/"},
		"the ring is pure placement logic"},
	{"internal/policy", []string{"internal/"},
		"storage policies are configuration (definitions read from swift.conf, looked up by name or index): which ring and which containers are the server's and the proxy's"},
	{"internal/casreg", []string{"internal/", "net", "os", "io", "sync", "github.com/"},
		"the consensus protocol is a pure state machine: messages and the time in, state, messages and outcomes out; the proxy and the storage node are its I/O edges"},
	{"internal/readlease", []string{"internal/", "net", "os", "io", "sync", "github.com/"},
		"the read lease is a pure state machine: messages and the time in, state and messages out; the storage node (internal/nodelease) and the proxy are its I/O edges"},
	{"internal/nodelease", []string{"internal/engine", "internal/index", "internal/storage", "internal/vfs", "internal/proxy", "internal/backend", "internal/s3", "internal/swift", "internal/server", "github.com/cockroachdb/pebble"},
		"a node's leases own no data: what a device holds is asked of the storage node, and messages go over the node protocol, both through interfaces the server wires"},
	{"internal/access", []string{"internal/"},
		"access decisions are pure logic: state in, decisions out, no I/O and no other layer"},
	{"internal/httpwire", []string{"internal/"},
		"HTTP precondition parsing is shared by both front ends and depends on nothing of Cairn's"},
	{"internal/binenc", []string{"internal/"},
		"the byte encoding depends on nothing of Cairn's"},
	{"internal/bench/...", []string{"internal/server", "internal/proxy", "internal/storage", "internal/engine", "internal/index", "internal/auth", "internal/s3"},
		"the load generator measures any S3 or Swift endpoint over HTTP, Cairn's or anyone's"},
	{"internal/objclient", []string{"internal/server", "internal/proxy", "internal/storage", "internal/engine", "internal/index", "internal/auth", "internal/bench", "internal/transfer"},
		"the outbound client speaks only the public protocols (it may borrow the SigV4 signer)"},
	{"internal/transfer", []string{"internal/server", "internal/proxy", "internal/storage", "internal/engine", "internal/index", "internal/auth", "internal/s3", "internal/bench"},
		"the command-line client moves files through objclient, as any user's client would"},
}

// allowed are the imports a package may have despite a rule that would forbid them.
var allowed = map[string][]string{
	// The byte encoding is itself pure (bytes in, values out): the protocol's state and
	// messages are written with it.
	"internal/casreg":    {"internal/binenc"},
	"internal/readlease": {"internal/binenc"},
}

func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(fields[0], module)
		for _, rule := range forbidden {
			if !matches(rule.pkg, pkg) {
				continue
			}
			checked++
			for _, imp := range fields[1:] {
				imp = strings.TrimPrefix(imp, module)
				if slices.Contains(allowed[pkg], imp) {
					continue
				}
				for _, bad := range rule.imports {
					if strings.HasPrefix(imp, bad) {
						t.Errorf("%s imports %s: %s", pkg, imp, rule.why)
					}
				}
			}
		}
	}
	if checked < 5 {
		t.Fatalf("only %d packages matched a rule: the rules no longer describe the tree", checked)
	}
}

func matches(pattern, pkg string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == pattern
}
