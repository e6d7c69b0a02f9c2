package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cairn-store/cairn/internal/ec"
	"github.com/cairn-store/cairn/internal/localcluster"
	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/storage"
	"github.com/cairn-store/cairn/test/e2e"
)

// TestErasureCodedPolicy: a cluster of eight storage processes with an erasure-coded policy
// 4+2 (cairn local-cluster --policies gold,ec42:4+2: one fragment per node, two handoffs per
// partition). Objects of every kind (empty, small, past a segment, several segments, an S3
// multipart upload) are written through S3 and Swift; two storage processes are killed (-9),
// both primaries of the objects; every object still reads byte for byte through both APIs,
// whole and in ranges; more are written and one deleted while they are down; they come back,
// one of them with its erasure-coded disk replaced by an empty one, and once the
// reconstructors have settled the devices themselves (read with the cluster stopped) hold
// exactly k+m archives of every object, archive i on primary i, each the archive the object
// encodes to, and nothing on a handoff.
func TestErasureCodedPolicy(t *testing.T) {
	e2e.SkipShort(t)
	if e2e.ClusterTopology() != nil {
		t.Skip("runs its own topology")
	}
	rootAK, rootSK := "CLUSTERROOT"+strings.ToUpper(e2e.RandomKey(4)), e2e.RandomKey(20)
	c, _ := start(t, localcluster.Config{Storage: 8, Proxies: 1, Policies: []string{"gold", "ec42:4+2"}, RootAccessKey: rootAK, RootSecretKey: rootSK,
		Args: []string{"--replication-interval", "1s"}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	const account = "ecacct"
	user, ak, sk, swk := account+":alice", "EC"+strings.ToUpper(e2e.RandomKey(8)), e2e.RandomKey(20), e2e.RandomKey(12)
	for _, args := range [][]string{{"account", "create", account},
		{"user", "create", user, "--user-access-key", ak, "--user-secret-key", sk, "--user-swift-key", swk, "--admin"}} {
		cmd := exec.CommandContext(ctx, e2e.Binary(t), append([]string{"admin", "--endpoint", c.Endpoint, "--access-key", rootAK, "--secret-key", rootSK}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cairn admin %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	swift := swiftLoginAt(t, c.Endpoint, user, swk)
	client := e2e.NewS3Client(c.Endpoint, ak, sk, e2e.NoRetries)

	const bucket, container = "s3-ec", "sw-ec"
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket),
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: "us-east-1:ec42"}}); err != nil {
		t.Fatal(err)
	}
	swift.must(t, "PUT", "/"+container, map[string]string{"X-Storage-Policy": "ec42"}, nil, http.StatusCreated)
	for _, name := range []string{bucket, container} {
		if hdr, _ := swift.must(t, "HEAD", "/"+name, nil, nil, http.StatusNoContent); hdr.Get("X-Storage-Policy") != "ec42" {
			t.Fatalf("%s: X-Storage-Policy %q", name, hdr.Get("X-Storage-Policy"))
		}
	}

	// What each object must hold, by bucket/container and name.
	want := map[[2]string][]byte{}
	put := func(where, key string, data []byte) {
		t.Helper()
		if where == bucket {
			if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data)}); err != nil {
				t.Fatalf("S3 PUT %s: %v", key, err)
			}
		} else {
			swift.must(t, "PUT", "/"+container+"/"+key, nil, data, http.StatusCreated)
		}
		want[[2]string{where, key}] = data
	}
	sizes := map[string]int{"empty": 0, "small": 100, "inline": 50 << 10, "past-a-segment": 1<<20 + 12345, "segments": 3<<20 + 333}
	for _, where := range []string{bucket, container} {
		for name, size := range sizes {
			put(where, name, randomBytes(size))
		}
	}
	// A multipart upload: its parts in the bucket's uploads container (the same policy) and
	// a manifest.
	parts := [][]byte{randomBytes(5 << 20), randomBytes(1<<20 + 7)}
	up, err := client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("mpu")})
	if err != nil {
		t.Fatal(err)
	}
	var done []s3types.CompletedPart
	for i, p := range parts {
		res, err := client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String("mpu"), UploadId: up.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p)})
		if err != nil {
			t.Fatal(err)
		}
		done = append(done, s3types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: res.ETag})
	}
	if _, err := client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("mpu"), UploadId: up.UploadId,
		MultipartUpload: &s3types.CompletedMultipartUpload{Parts: done}}); err != nil {
		t.Fatal(err)
	}
	want[[2]string{bucket, "mpu"}] = bytes.Join(parts, nil)

	readAll := func(when string) {
		t.Helper()
		for k, data := range want {
			where, key := k[0], k[1]
			got, err := getObject(ctx, client, where, key) // an S3 bucket is a Swift container
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%s: S3 GET %s/%s: %v (%d bytes, want %d)", when, where, key, err, len(got), len(data))
			}
			if _, got := swift.must(t, "GET", "/"+where+"/"+key, nil, nil, http.StatusOK); !bytes.Equal(got, data) {
				t.Fatalf("%s: Swift GET %s/%s: %d bytes differ", when, where, key, len(got))
			}
			if len(data) > 10 {
				from, to := len(data)/3, len(data)/3+len(data)/2
				rng := fmt.Sprintf("bytes=%d-%d", from, to)
				if _, got := swift.must(t, "GET", "/"+where+"/"+key, map[string]string{"Range": rng}, nil, http.StatusPartialContent); !bytes.Equal(got, data[from:to+1]) {
					t.Fatalf("%s: Swift GET %s/%s %s: differs", when, where, key, rng)
				}
				o, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(where), Key: aws.String(key), Range: aws.String("bytes=-7")})
				if err != nil {
					t.Fatalf("%s: S3 GET %s/%s bytes=-7: %v", when, where, key, err)
				}
				got, err := io.ReadAll(o.Body)
				o.Body.Close()
				if err != nil || !bytes.Equal(got, data[len(data)-7:]) {
					t.Fatalf("%s: S3 GET %s/%s bytes=-7: %v", when, where, key, err)
				}
			}
		}
		// Listings show the objects' sizes, not their archives'.
		for _, o := range swift.objects(t, container) {
			if data := want[[2]string{container, o.Name}]; o.Bytes != int64(len(data)) || o.Hash != md5hex(data) {
				t.Fatalf("%s: listed %+v, want %d bytes, %s", when, o, len(data), md5hex(data))
			}
		}
	}
	readAll("all nodes up")

	// Two storage processes killed: both are primaries of the largest object, whose
	// partition thus lacks two fragments (and most others one or two).
	ecRing, err := ring.Load(filepath.Join(c.RingDir, "object-1.ring.gz"))
	if err != nil {
		t.Fatal(err)
	}
	big := meta.ObjectName{Account: account, Container: container, Object: "segments"}
	prim := ecRing.Nodes(ecRing.Partition(big.Placed()))
	var victims []*localcluster.Node
	for _, n := range c.Storage() {
		if n.Addr == prim[1].Node || n.Addr == prim[4].Node {
			victims = append(victims, n)
		}
	}
	if len(victims) != 2 {
		t.Fatalf("victims %v of primaries %v", victims, prim)
	}
	for _, n := range victims {
		n.Kill()
	}
	readAll("two storage nodes killed")
	// More written, and one deleted, while they are down: their fragments go to handoffs.
	for _, where := range []string{bucket, container} {
		put(where, "while-down-small", randomBytes(777))
		put(where, "while-down-big", randomBytes(2<<20+99))
	}
	if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("small")}); err != nil {
		t.Fatal(err)
	}
	delete(want, [2]string{bucket, "small"})
	readAll("two down, after more writes")
	if _, err := getObject(ctx, client, bucket, "small"); !isNoSuchKey(err) {
		t.Fatalf("deleted object: %v", err)
	}

	// The second comes back with its erasure-coded disk replaced by an empty one: every
	// archive it held must be rebuilt from the others.
	if err := os.RemoveAll(filepath.Join(victims[1].DataDir, "devices", "p1-d1")); err != nil {
		t.Fatal(err)
	}
	for _, n := range victims {
		if err := n.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	readAll("both back, one with an empty disk")
	waitReconstructed(t, c, convergence)
	readAll("reconstructed")

	archives := ecOnDisk(t, c, ecRing)
	scheme, err := ec.New(4, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[[2]string]meta.ObjectName{}
	for name := range archives {
		if name.Account == account {
			byName[[2]string{name.Container, name.Object}] = name
		}
	}
	for k, data := range want {
		name, ok := byName[k]
		if !ok {
			t.Fatalf("%s/%s: nothing on the erasure-coded devices", k[0], k[1])
		}
		if k[1] == "mpu" {
			continue // a manifest: its archives are checked below with every other name
		}
		checkArchives(t, scheme, ecRing, name, archives[name], data)
	}
	if gone := byName[[2]string{bucket, "small"}]; !allDeleted(archives[gone]) {
		t.Fatalf("deleted %q: %+v", gone.Object, archives[gone])
	}
	// Every name on the devices (the upload's parts, its marker and its manifest included) is
	// whole and home: each archive on its primary, of the same version, re-encoding to itself;
	// a deleted name's tombstone on every primary.
	for name, as := range archives {
		if allDeleted(as) {
			prim := ecRing.Nodes(ecRing.Partition(name.Placed()))
			for _, a := range as {
				if !slices.ContainsFunc(prim, func(d ring.Device) bool { return d.Node == a.node && d.Name == a.device }) || a.ts != as[0].ts {
					t.Fatalf("deleted %q: tombstone at %d on %s, not a primary or another version", name.Object, a.ts, a.node)
				}
			}
			if len(as) != scheme.Fragments() {
				t.Fatalf("deleted %q: %d tombstones, want one on each of %d primaries", name.Object, len(as), scheme.Fragments())
			}
			continue
		}
		checkArchives(t, scheme, ecRing, name, as, nil)
	}
}

func allDeleted(as []ecArchive) bool {
	return len(as) > 0 && !slices.ContainsFunc(as, func(a ecArchive) bool { return !a.deleted })
}

// waitReconstructed waits until every storage node has completed two more replication and
// reconstruction passes and the last of them left no partition away from its primaries.
func waitReconstructed(t *testing.T, c *localcluster.Cluster, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	start := map[string]float64{}
	for _, n := range c.Storage() {
		start[n.Name] = metric(t, n, "cairn_reconstructor_passes_total")
	}
	for {
		settled := true
		var state []string
		for _, n := range c.Storage() {
			passes, left := metric(t, n, "cairn_reconstructor_passes_total"), metric(t, n, "cairn_reconstructor_handoff_partitions")
			if passes < start[n.Name]+2 || left != 0 {
				settled = false
			}
			state = append(state, fmt.Sprintf("%s: %v passes, %v handoff partitions", n.Name, passes, left))
		}
		if settled {
			waitReplicated(t, c, timeout)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("reconstruction did not settle within %v: %s", timeout, strings.Join(state, "; "))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// ecArchive is one device's copy of a name on an erasure-coded device.
type ecArchive struct {
	node, device string
	ts           meta.Timestamp
	deleted      bool
	obj          meta.Object
	data         []byte
}

// ecOnDisk stops the cluster and reads every storage node's erasure-coded devices directly:
// for each name, the archives (and tombstones) the devices hold.
func ecOnDisk(t *testing.T, c *localcluster.Cluster, rg *ring.Ring) map[meta.ObjectName][]ecArchive {
	t.Helper()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	out := map[meta.ObjectName][]ecArchive{}
	for _, n := range c.Storage() {
		const dev = "p1-d1"
		node, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: dev, Dir: filepath.Join(n.DataDir, "devices", dev)}},
			HashPrefix: rg.HashPrefix, HashSuffix: rg.HashSuffix})
		if err != nil {
			t.Fatalf("opening %s/%s: %v", n.Name, dev, err)
		}
		err = node.PartitionsWithData(ctx, dev, rg.PartPower, func(part uint32) error {
			vs, err := node.PartitionVersions(ctx, dev, rg.PartPower, part, nil)
			if err != nil {
				return err
			}
			for _, v := range vs {
				a := ecArchive{node: n.Addr, device: dev, ts: v.Timestamp, deleted: v.Deleted}
				if !v.Deleted {
					r, err := node.GetObject(ctx, dev, part, v.Name, nil)
					if err != nil {
						return fmt.Errorf("reading %v: %w", v.Name, err)
					}
					a.obj = r.Object
					a.data, err = io.ReadAll(r)
					r.Close()
					if err != nil {
						return fmt.Errorf("reading %v: %w", v.Name, err)
					}
				}
				out[v.Name] = append(out[v.Name], a)
			}
			return nil
		})
		node.Close()
		if err != nil {
			t.Fatalf("%s/%s: %v", n.Name, dev, err)
		}
	}
	return out
}

// checkArchives checks that a name's k+m archives are on its primaries, archive i on primary
// i, one version, and that they are the archives of data (nil: of what they decode to).
func checkArchives(t *testing.T, s *ec.Scheme, rg *ring.Ring, name meta.ObjectName, as []ecArchive, data []byte) {
	t.Helper()
	prim := rg.Nodes(rg.Partition(name.Placed()))
	if len(as) != s.Fragments() {
		var where []string
		for _, a := range as {
			where = append(where, a.node)
		}
		t.Fatalf("%q: %d copies on %v, want %d archives on %v", name.Object, len(as), where, s.Fragments(), prim)
	}
	byIndex := make([][]byte, s.Fragments())
	var first meta.ECArchive
	for _, a := range as {
		arc, ok := a.obj.ECArchive()
		if a.deleted || !ok {
			t.Fatalf("%q on %s: not an archive (deleted %v, %+v)", name.Object, a.node, a.deleted, a.obj.SysMeta)
		}
		if prim[arc.Index].Node != a.node || prim[arc.Index].Name != a.device {
			t.Fatalf("%q: archive %d on %s/%s, its primary is %s/%s", name.Object, arc.Index, a.node, a.device, prim[arc.Index].Node, prim[arc.Index].Name)
		}
		if byIndex[arc.Index] != nil {
			t.Fatalf("%q: archive %d twice", name.Object, arc.Index)
		}
		if first.K == 0 {
			first = arc
		} else if !arc.SameData(first) || a.ts != as[0].ts {
			t.Fatalf("%q: archives of different versions: %+v at %d, %+v at %d", name.Object, first, as[0].ts, arc, a.ts)
		}
		byIndex[arc.Index] = a.data
	}
	if a := as[0].obj; a.IsManifest() {
		return // no bytes: the segment list is in every archive's metadata
	}
	if data == nil {
		var out bytes.Buffer
		rs := make([]io.Reader, s.Fragments())
		for i := s.M; i < s.Fragments(); i++ { // parity and the last data fragments
			rs[i] = bytes.NewReader(byIndex[i])
		}
		if err := s.Decode(&out, rs, first.Size, 0, first.Size); err != nil {
			t.Fatalf("%q: decoding: %v", name.Object, err)
		}
		data = out.Bytes()
	}
	if int64(len(data)) != first.Size || md5hex(data) != first.ETag {
		t.Fatalf("%q: decodes to %d bytes (%s), the archives say %d (%s)", name.Object, len(data), md5hex(data), first.Size, first.ETag)
	}
	bufs := make([]bytes.Buffer, s.Fragments())
	ws := make([]io.Writer, len(bufs))
	for i := range bufs {
		ws[i] = &bufs[i]
	}
	if _, err := s.Encode(bytes.NewReader(data), ws); err != nil {
		t.Fatal(err)
	}
	for i := range bufs {
		if !bytes.Equal(bufs[i].Bytes(), byIndex[i]) {
			t.Fatalf("%q: archive %d on %s is not the object's (%d bytes, want %d)", name.Object, i, prim[i].Node, len(byIndex[i]), bufs[i].Len())
		}
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}
