package robustness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/cairn-store/cairn/internal/localcluster"
	"github.com/cairn-store/cairn/test/e2e"
)

func TestMain(m *testing.M) { os.Exit(e2e.Main(m)) }

// profile is how long and how hard a run goes.
type profile struct {
	duration time.Duration
	clients  int
	keys     int // of each kind: plain keys (put, get, delete) and lock keys (create, get, delete)
}

var profiles = map[string]profile{
	"short": {duration: 2 * time.Minute, clients: 6, keys: 6},
	"long":  {duration: 15 * time.Minute, clients: 8, keys: 12},
}

// history records the operations of a run, as porcupine takes them.
type history struct {
	mu    sync.Mutex
	start time.Time
	ops   []porcupine.Operation
	lists []listing // LISTs, checked apart (lists_test.go)
}

func (h *history) now() int64 { return time.Since(h.start).Nanoseconds() }

func (h *history) add(client int, in input, call int64, out output) {
	ret := h.now()
	if out.outcome == unknown {
		ret = math.MaxInt64 // it may take effect at any time from its call on
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
}

// TestRobustness runs a profile (CAIRN_ROBUSTNESS=short|long; CAIRN_ROBUSTNESS_DURATION
// overrides its length) against a cluster of 4 storage processes and 2 proxies with 3
// replicas, or the embedded default (CAIRN_ROBUSTNESS_TARGET=embedded), under the nemesis,
// and checks the history. The seed
// (CAIRN_ROBUSTNESS_SEED to repeat one) chooses the operations and the faults; the processes'
// timing is the machine's. A failing run writes the history's visualization next to the test's
// output and names its seed.
func TestRobustness(t *testing.T) {
	name := os.Getenv("CAIRN_ROBUSTNESS")
	if name == "" {
		t.Skip("set CAIRN_ROBUSTNESS=short or long to run the robustness tier")
	}
	prof, found := profiles[name]
	if !found {
		t.Fatalf("CAIRN_ROBUSTNESS=%q: no such profile (short, long)", name)
	}
	if d := os.Getenv("CAIRN_ROBUSTNESS_DURATION"); d != "" {
		var err error
		if prof.duration, err = time.ParseDuration(d); err != nil {
			t.Fatalf("CAIRN_ROBUSTNESS_DURATION=%q: %v", d, err)
		}
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CAIRN_ROBUSTNESS_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("profile %s (%v of faults), target %q, seed %d (CAIRN_ROBUSTNESS_SEED=%d repeats the choices)", name, prof.duration, os.Getenv("CAIRN_ROBUSTNESS_TARGET"), seed, seed)

	target := os.Getenv("CAIRN_ROBUSTNESS_TARGET")
	var sys *system
	switch target {
	case "", "cluster":
		sys = startCluster(t)
	case "embedded":
		sys = startEmbedded(t)
	default:
		t.Fatalf("CAIRN_ROBUSTNESS_TARGET=%q: no such target (cluster, embedded)", target)
	}
	ctx := context.Background()
	const bucket = "robust"
	if _, err := sys.root.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	if err := createVersionedBucket(ctx, sys.root); err != nil {
		t.Fatal(err)
	}
	clientsOf := make([]*s3.Client, len(sys.endpoints))
	for i, ep := range sys.endpoints {
		clientsOf[i] = e2e.NewS3Client(ep, sys.access, sys.secret, e2e.NoRetries, func(o *s3.Options) {
			o.HTTPClient = &http.Client{Timeout: 30 * time.Second}
		})
	}

	h := &history{start: time.Now()}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for cl := range prof.clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(cl)))
			s3c := clientsOf[cl%len(clientsOf)]
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				runOp(ctx, s3c, bucket, h, cl, n, rng, prof)
			}
		})
	}
	injected := nemesis(t, sys, chosenFaults(t, sys), rand.New(rand.NewPCG(seed, 1<<32)), stop, prof.duration)
	close(stop)
	wg.Wait()
	// Every node back, so that the final reads see the whole cluster.
	for _, n := range append(sys.storage, sys.fronts...) {
		n.Signal(syscall.SIGCONT)
		if !n.Running() {
			sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
			if err := n.Start(sctx); err != nil {
				t.Fatal(err)
			}
			cancel()
		}
	}

	h.mu.Lock()
	ops := h.ops
	h.mu.Unlock()
	counts := map[string]int{}
	for _, op := range ops {
		counts[op.Input.(input).kind.String()+"/"+[...]string{"ok", "404", "412", "409", "unknown"}[op.Output.(output).outcome]]++
	}
	t.Logf("%d operations: %v; faults injected: %v", len(ops), counts, injected)
	if strings.Contains(os.Getenv("CAIRN_ROBUSTNESS_ARGS"), "--read-leases") {
		answers := map[string]float64{}
		for _, n := range sys.storage {
			if n.Running() {
				for _, a := range []string{"alone", "expired", "revoked", "unsettled", "no_grant", "not_replicated"} {
					answers[a] += e2e.Metric(t, n.Endpoint(), `cairn_read_lease_reads_total{answer="`+a+`"}`)
				}
			}
		}
		t.Logf("lease reads of the storage nodes running at the end (restarts lose counts): %v", answers)
	}
	checkVersions(t, ctx, sys.root, h)
	checkLists(t, h, target == "embedded" || os.Getenv("CAIRN_ROBUSTNESS_STRICT_LISTS") != "0")
	res, info := porcupine.CheckOperationsVerbose(model.ToModel(), ops, 5*time.Minute)
	switch res {
	case porcupine.Ok:
	case porcupine.Unknown:
		// A run that proves nothing must not pass: it happens when many writes end without
		// an answer (each stays open to the end of the history, and the search explodes),
		// which is itself a sign of a cluster refusing writes it should take.
		t.Fatalf("seed %d: the checker timed out: the history is neither proved nor refuted (%d operations)", seed, len(ops))
	default:
		out := filepath.Join(os.TempDir(), fmt.Sprintf("cairn-robustness-%d", seed))
		if err := porcupine.VisualizePath(model.ToModel(), info, out+".html"); err == nil {
			t.Logf("visualization: %s.html", out)
		}
		if err := saveHistory(out+".json", ops); err == nil {
			t.Logf("history: %s.json (CAIRN_ROBUSTNESS_HISTORY=%s.json go test -run TestDiagnoseHistory)", out, out)
		}
		t.Fatalf("seed %d: the history is not linearizable against docs/consistency.md's model:\n%s", seed, diagnose(ops))
	}
}

// runOp runs one random operation and records it.
func runOp(ctx context.Context, c *s3.Client, bucket string, h *history, client, n int, rng *rand.Rand, prof profile) {
	// Plain keys (put, get, delete) and lock keys (create, put, get, delete: conditional and
	// plain writes racing on one key), in a bucket and in a bucket with versioning on.
	class := rng.IntN(4)
	lock := class%2 == 1
	key := fmt.Sprintf("plain-%d", rng.IntN(prof.keys))
	if lock {
		key = fmt.Sprintf("lock-%d", rng.IntN(prof.keys))
	}
	if class >= 2 {
		key = versionedKey(key)
	}
	bucket = bucketFor(key, bucket)
	in := input{key: key}
	switch r := rng.IntN(20); {
	case r < 8:
		in.kind = opGet
	case r < 16:
		in.kind = opPut
		if lock && r < 14 {
			in.kind = opCreate
		}
		in.value = fmt.Sprintf("c%d-%d", client, n)
		in.multipart = rng.IntN(4) == 0
	case r < 18:
		in.kind = opDelete
	default:
		listBucket(ctx, c, bucket, h)
		return
	}
	call := h.now()
	var err error
	out := output{outcome: ok}
	var complete func(ifNoneMatch *string) (string, error)
	if in.multipart {
		// The upload and its part change nothing a client sees: a failure there is no write.
		if complete, err = startUpload(ctx, c, bucket, key, in.value); err != nil {
			return
		}
		call = h.now()
	}
	switch in.kind {
	case opGet:
		var r *s3.GetObjectOutput
		r, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err == nil {
			var b []byte
			b, err = io.ReadAll(r.Body)
			r.Body.Close()
			out.value = string(b)
		}
		if code(err) == "NoSuchKey" {
			out.outcome, err = notFound, nil
		}
		if err != nil {
			return // a read that failed says nothing
		}
	case opPut, opCreate:
		put := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader([]byte(in.value))}
		if in.kind == opCreate {
			put.IfNoneMatch = aws.String("*")
		}
		if complete != nil {
			out.version, err = complete(put.IfNoneMatch)
		} else {
			var res *s3.PutObjectOutput
			if res, err = c.PutObject(ctx, put); err == nil {
				out.version = aws.ToString(res.VersionId)
			}
		}
		switch code(err) {
		case "":
		case "PreconditionFailed":
			out.outcome = exists
		case "ConditionalRequestConflict":
			out.outcome = conflict
		default:
			out.outcome = unknown
		}
	case opDelete:
		_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			out.outcome = unknown
		}
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		// The proxy was down: the request never reached it, and so took no effect.
		return
	}
	h.add(client, in, call, out)
}

// startUpload starts a multipart upload of value to key, as its one part, and returns the
// upload's Complete (with If-None-Match when ifNoneMatch is set), which returns the version ID
// it made.
func startUpload(ctx context.Context, c *s3.Client, bucket, key, value string) (func(ifNoneMatch *string) (string, error), error) {
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, err
	}
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte(value))})
	if err != nil {
		return nil, err
	}
	return func(ifNoneMatch *string) (string, error) {
		res, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: up.UploadId,
			IfNoneMatch: ifNoneMatch, MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}})
		if err != nil {
			return "", err
		}
		return aws.ToString(res.VersionId), nil
	}, nil
}

// listBucket lists a bucket (every key of the run fits in one page) and records the LIST; one
// that failed says nothing and is not recorded.
func listBucket(ctx context.Context, c *s3.Client, bucket string, h *history) {
	l := listing{bucket: bucket, call: h.now()}
	out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	l.ret = h.now()
	if err != nil || aws.ToBool(out.IsTruncated) {
		return
	}
	for _, o := range out.Contents {
		l.keys = append(l.keys, aws.ToString(o.Key))
	}
	h.addListing(l)
}

func code(err error) string {
	if err == nil {
		return ""
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return "error"
}

// faults are the nemesis's faults by name, each with its weight in the random choice.
var faults = []struct {
	name   string
	weight int
}{
	{"kill", 3},  // a storage node killed with SIGKILL, restarted 1 to 4 s later
	{"pause", 2}, // a storage node paused (SIGSTOP) for 1 to 4 s
	{"cut", 1},   // a storage node's link refuses connections and cuts open ones, 1 to 4 s
	{"slow", 1},  // a storage node's link delays every chunk by 10 to 100 ms, 1 to 4 s
	{"proxy", 2}, // a proxy killed with SIGKILL, restarted 1 s later
	{"clock", 1}, // a proxy restarted with its clock off by up to 10 s either way, 2 to 5 s
	{"full", 1},  // a storage node's device filled to under its reserve (writes there refused, 507), 1 to 4 s
}

// chosenFaults returns the faults a run injects: those CAIRN_ROBUSTNESS_FAULTS names (comma
// separated), else all, less those the system cannot have (links without relays, proxies in
// the embedded default).
func chosenFaults(t *testing.T, sys *system) []string {
	want := map[string]bool{}
	if v := os.Getenv("CAIRN_ROBUSTNESS_FAULTS"); v != "" {
		for _, f := range strings.Split(v, ",") {
			want[strings.TrimSpace(f)] = true
		}
	}
	var out []string
	for _, f := range faults {
		if len(want) > 0 && !want[f.name] {
			continue
		}
		delete(want, f.name)
		if (f.name == "cut" || f.name == "slow") && !sys.links || (f.name == "proxy" || f.name == "clock") && len(sys.fronts) == 0 ||
			f.name == "full" && sys.fullable == "" {
			continue
		}
		for range f.weight {
			out = append(out, f.name)
		}
	}
	for f := range want {
		t.Fatalf("CAIRN_ROBUSTNESS_FAULTS: no fault %q (kill, pause, cut, slow, proxy, clock, full)", f)
	}
	if len(out) == 0 {
		t.Fatal("no fault this system can have was chosen")
	}
	return out
}

// nemesis injects faults (chosen at random among those given, by their weights) until the
// duration has passed; one fault at a time, with quiet spells of 2 to 5 s between. It counts
// the faults it injected.
func nemesis(t *testing.T, sys *system, chosen []string, rng *rand.Rand, stop <-chan struct{}, d time.Duration) map[string]int {
	end := time.Now().Add(d)
	injected := map[string]int{}
	pause := func(d time.Duration) bool {
		select {
		case <-stop:
			return false
		case <-time.After(d):
			return time.Now().Before(end)
		}
	}
	restart := func(n proc) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := n.Start(ctx); err != nil {
			t.Errorf("restarting %s: %v", n.Endpoint(), err)
		}
	}
	for pause(time.Duration(2+rng.IntN(4)) * time.Second) {
		f := chosen[rng.IntN(len(chosen))]
		injected[f]++
		switch f {
		case "kill":
			n := sys.storage[rng.IntN(len(sys.storage))]
			t.Logf("nemesis: kill -9 storage %s", n.Endpoint())
			n.Kill()
			pause(time.Duration(1+rng.IntN(4)) * time.Second)
			restart(n)
		case "pause":
			n := sys.storage[rng.IntN(len(sys.storage))]
			t.Logf("nemesis: SIGSTOP storage %s", n.Endpoint())
			n.Signal(syscall.SIGSTOP)
			pause(time.Duration(1+rng.IntN(4)) * time.Second)
			n.Signal(syscall.SIGCONT)
		case "cut":
			n := sys.storage[rng.IntN(len(sys.storage))].(*localcluster.Node)
			t.Logf("nemesis: cut off storage %s", n.Addr)
			if err := n.Link().Refuse(true); err != nil {
				t.Errorf("cutting %s off: %v", n.Addr, err)
			}
			pause(time.Duration(1+rng.IntN(4)) * time.Second)
			if err := n.Link().Refuse(false); err != nil {
				t.Errorf("healing %s: %v", n.Addr, err)
			}
		case "slow":
			n := sys.storage[rng.IntN(len(sys.storage))].(*localcluster.Node)
			d := time.Duration(10+rng.IntN(90)) * time.Millisecond
			t.Logf("nemesis: slow the link of storage %s by %v", n.Addr, d)
			n.Link().SetDelay(d)
			pause(time.Duration(1+rng.IntN(4)) * time.Second)
			n.Link().SetDelay(0)
		case "proxy":
			n := sys.fronts[rng.IntN(len(sys.fronts))]
			t.Logf("nemesis: kill -9 proxy %s", n.Endpoint())
			n.Kill()
			pause(time.Second)
			restart(n)
		case "clock":
			n := sys.fronts[rng.IntN(len(sys.fronts))].(*localcluster.Node)
			skew := time.Duration(rng.IntN(20001)-10000) * time.Millisecond
			t.Logf("nemesis: the clock of proxy %s off by %v", n.Endpoint(), skew)
			n.Kill()
			n.Env = []string{"CAIRN_TEST_CLOCK_OFFSET=" + skew.String()}
			restart(n)
			pause(time.Duration(2+rng.IntN(4)) * time.Second)
			n.Kill()
			n.Env = nil
			restart(n)
		case "full":
			free, err := fill(sys.fullable)
			if err != nil {
				t.Errorf("filling %s: %v", sys.fullable, err)
				continue
			}
			left, _ := freeBytes(sys.fullable)
			t.Logf("nemesis: the device of storage %s filled, %d MiB left (under the engine's reserve of 256 MiB)", sys.fullable, left>>20)
			pause(time.Duration(1+rng.IntN(4)) * time.Second)
			if err := free(); err != nil {
				t.Errorf("freeing %s: %v", sys.fullable, err)
			}
		}
	}
	return injected
}
