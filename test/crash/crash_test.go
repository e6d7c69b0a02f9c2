// Package crash kills a loaded cairn server with SIGKILL and checks, after a restart on the same
// data directory, that every acknowledged write survived byte for byte, every acknowledged delete
// stayed deleted, and every write that was in flight left either the old or the new version.
//
// One more worker writes through Swift objects that expire within a second and overwrites them
// without an expiry while the expirer (every 200 ms here) deletes what is due: an acknowledged
// overwrite must never be deleted by an expiry it replaced, kill or no kill.
//
// A versioned worker writes versions of its own keys in a versioned bucket (versioned_test.go):
// every acknowledged version must read back by its ID, and no key may be left a link to a
// version that is not there.
//
// A third kind of worker races, on each upload, a CompleteMultipartUpload against an
// AbortMultipartUpload and a late re-upload of the part: exactly one of Complete and Abort may
// win while the server is up, and a completed object must read back whole after the kill.
//
// Knobs (environment): CAIRN_CRASH_ITERATIONS (default 15), CAIRN_CRASH_SEED (default: time),
// CAIRN_CRASH_WORKERS (default 6).
package crash

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/cairn-store/cairn/test/e2e"
)

func TestMain(m *testing.M) { os.Exit(e2e.Main(m)) }

const (
	KiB         = 1 << 10
	MiB         = 1 << 20
	keysPerWork = 12
	partSize    = 5 * MiB // S3's minimum part size (all parts but the last)
)

// version is one possible content of a key: absent, or bytes with this sha256.
type version struct {
	absent bool
	sum    [32]byte
	size   int
}

func (v version) String() string {
	if v.absent {
		return "absent"
	}
	return fmt.Sprintf("%d bytes sha256 %x", v.size, v.sum[:6])
}

// keyState is what the test knows of one key: the allowed versions. After an acknowledged
// operation exactly one version is allowed; an operation that was never acknowledged adds its
// version to the allowed ones (it may or may not have happened).
type keyState struct {
	allowed []version
	// expiring holds the versions written with an expiry: whichever of them is current may
	// be deleted by the expirer at any time.
	expiring map[[32]byte]bool
}

func (k *keyState) ack(v version)       { k.allowed = []version{v} }
func (k *keyState) uncertain(v version) { k.allowed = append(k.allowed, v) }
func (k *keyState) allows(v version) bool {
	for _, a := range k.allowed {
		if a.absent == v.absent && (v.absent || a.sum == v.sum) {
			return true
		}
	}
	return false
}

type stats struct {
	puts, bigPuts, deletes, multiparts, expiring, overwrites, raceCompleted, raceAborted, unacked, errsAlive atomic.Int64
	// refused counts writes answered 507 on a full disk (only allowed with fullDisk).
	refused  atomic.Int64
	fullDisk bool
	// firstAck is closed when the first PUT, DELETE or multipart upload is acknowledged.
	firstAck     chan struct{}
	firstAckOnce sync.Once
}

// acked records that an operation was acknowledged.
func (st *stats) acked(counter *atomic.Int64) {
	counter.Add(1)
	st.firstAckOnce.Do(func() { close(st.firstAck) })
}

// patience bounds waits for what must happen (a first acknowledgement, a listing that agrees):
// far more than any machine needs, so that reaching it means it will not happen.
const patience = 2 * time.Minute

// refusedForSpace reports whether err is a 507 that the test allows: nothing was stored.
func (st *stats) refusedForSpace(err error) bool {
	var ae smithy.APIError
	if st.fullDisk && errors.As(err, &ae) && ae.ErrorCode() == "InsufficientStorage" {
		st.refused.Add(1)
		return true
	}
	return false
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func TestCrashKillNine(t *testing.T) {
	e2e.SkipShort(t)
	runCrash(t, t.TempDir(), envInt("CAIRN_CRASH_ITERATIONS", 15), false)
}

// TestCrashKillNineOnFullDisk runs the same load on a file system too small for it (a 360 MiB
// tmpfs, of which the server keeps 256 MiB in reserve and 32 MiB as ballast), so that writes
// are refused with 507 much of the time and the kills land on a full disk: a refused write
// changes nothing, and every acknowledged one survives.
func TestCrashKillNineOnFullDisk(t *testing.T) {
	e2e.SkipShort(t)
	if os.Geteuid() != 0 {
		t.Skip("full-disk crash test: needs root to mount a small tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=360m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("full-disk crash test: cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	runCrash(t, filepath.Join(dir, "data"), max(envInt("CAIRN_CRASH_ITERATIONS", 15)/3, 1), true)
}

// runCrash is the kill -9 loop over dataDir. fullDisk: 507 InsufficientStorage is an expected
// answer (nothing changed), and the test checks that the disk was indeed full at times.
func runCrash(t *testing.T, dataDir string, iterations int, fullDisk bool) {
	workers := envInt("CAIRN_CRASH_WORKERS", 6)
	seed := int64(envInt("CAIRN_CRASH_SEED", int(time.Now().UnixNano()%1e9)))
	t.Logf("seed %d (CAIRN_CRASH_SEED), %d iterations, %d workers", seed, iterations, workers)
	rng := rand.New(rand.NewSource(seed))

	ak, sk := "CRASH"+e2e.RandomKey(8), e2e.RandomKey(20)
	start := func() *e2e.Server {
		// The auditor runs flat out beside the load: a version it reads while a worker
		// overwrites or deletes it must not be flagged (a flagged object fails the reads below).
		return e2e.Start(t, e2e.Options{DataDir: dataDir, AccessKey: ak, SecretKey: sk, Args: []string{"--expirer-interval", "200ms",
			"--audit-interval", "50ms", "--audit-bytes-per-second", "-1", "--audit-records-per-second", "-1"}})
	}
	srv := start()
	ctx := e2e.Context(t)
	bucket := "crash-" + e2e.RandomKey(4)
	if _, err := srv.S3Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}

	vs := newVersionedState(ctx, t, srv.S3Client())
	state := map[string]*keyState{}
	for w := 0; w < workers; w++ {
		for k := 0; k < keysPerWork; k++ {
			state[fmt.Sprintf("w%02d/k%02d", w, k)] = &keyState{allowed: []version{{absent: true}}}
		}
	}
	for k := 0; k < keysPerWork; k++ {
		state[expiryKey(k)] = &keyState{allowed: []version{{absent: true}}}
		state[raceKey(k)] = &keyState{allowed: []version{{absent: true}}}
	}

	var refused int64
	for it := 0; it < iterations; it++ {
		st := stats{fullDisk: fullDisk, firstAck: make(chan struct{})}
		// Each worker owns its keys, so operations on one key never overlap.
		client := srv.S3Client(e2e.NoRetries)
		loadCtx, stopLoad := context.WithCancel(ctx)
		var killed atomic.Bool
		var wg sync.WaitGroup
		var mu sync.Mutex // guards state
		for w := 0; w < workers; w++ {
			wg.Add(1)
			wseed := rng.Int63()
			go func(w int) {
				defer wg.Done()
				runWorker(loadCtx, t, client, bucket, w, rand.New(rand.NewSource(wseed)), state, &mu, &killed, &st)
			}(w)
		}
		wg.Add(1)
		eseed := rng.Int63()
		go func() {
			defer wg.Done()
			runExpiryWorker(loadCtx, t, srv, bucket, rand.New(rand.NewSource(eseed)), state, &mu, &killed, &st)
		}()
		wg.Add(1)
		mseed := rng.Int63()
		go func() {
			defer wg.Done()
			runRaceWorker(loadCtx, t, client, bucket, rand.New(rand.NewSource(mseed)), state, &mu, &killed, &st)
		}()
		wg.Add(1)
		vseed := rng.Int63()
		go func() {
			defer wg.Done()
			runVersionedWorker(loadCtx, t, client, vs, rand.New(rand.NewSource(vseed)), &killed, &st)
		}()
		// The kill comes at a random time, but not before the first acknowledgement: a loaded
		// machine may take longer than the shortest wait to serve anything, and an iteration in
		// which nothing was acknowledged would check nothing.
		started := time.Now()
		wait := time.Duration(500+rng.Intn(5500)) * time.Millisecond
		select {
		case <-st.firstAck:
		case <-time.After(patience):
		case <-ctx.Done():
		}
		time.Sleep(time.Until(started.Add(wait)))
		if n := checksumFailures(t, srv); n != 0 {
			t.Errorf("iteration %d: %v versions found corrupt under load (the auditor or a read flagged a version it raced with)", it, n)
		}
		killed.Store(true)
		srv.Kill()
		ran := time.Since(started).Round(time.Millisecond)
		stopLoad()
		wg.Wait()
		t.Logf("iteration %d: killed after %v: %d small PUTs, %d large PUTs, %d DELETEs, %d multipart uploads, %d expiring PUTs, %d overwrites of expiring objects, %d raced uploads completed and %d aborted acknowledged; %d in flight; %d errors before the kill",
			it, ran, st.puts.Load(), st.bigPuts.Load(), st.deletes.Load(), st.multiparts.Load(), st.expiring.Load(), st.overwrites.Load(),
			st.raceCompleted.Load(), st.raceAborted.Load(), st.unacked.Load(), st.errsAlive.Load())
		if st.puts.Load()+st.bigPuts.Load()+st.deletes.Load()+st.multiparts.Load() == 0 {
			t.Errorf("iteration %d: no operation was acknowledged in %v", it, ran)
		}
		if fullDisk {
			t.Logf("iteration %d: %d writes refused for space", it, st.refused.Load())
			refused += st.refused.Load()
		}

		srv = start()
		verify(ctx, t, srv.S3Client(), bucket, state, it)
		verifyVersioned(ctx, t, srv.S3Client(), vs, it)
		if t.Failed() {
			t.Fatalf("iteration %d failed (seed %d); data dir kept in the test's temp dir until cleanup", it, seed)
		}
	}
	if fullDisk && refused == 0 {
		t.Errorf("no write was refused for space: the disk never filled, so the test proved nothing")
	}
}

// checksumFailures returns what the server's /metrics says of cairn_device_checksum_failures_total
// on d0: versions found corrupt since it started (0 in a cluster, whose proxy holds no device).
func checksumFailures(t *testing.T, srv *e2e.Server) float64 {
	t.Helper()
	if e2e.ClusterTopology() != nil {
		return 0
	}
	resp, err := http.Get(srv.Endpoint + "/metrics")
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, `cairn_device_checksum_failures_total{device="d0"} `); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metrics: %q: %v", line, err)
			}
			return n
		}
	}
	t.Fatal("metrics: no cairn_device_checksum_failures_total for d0")
	return 0
}

func runWorker(ctx context.Context, t *testing.T, c *s3.Client, bucket string, w int, rng *rand.Rand,
	state map[string]*keyState, mu *sync.Mutex, killed *atomic.Bool, st *stats) {
	for ctx.Err() == nil {
		key := fmt.Sprintf("w%02d/k%02d", w, rng.Intn(keysPerWork))
		var v version
		var err error
		var counter *atomic.Int64
		switch r := rng.Intn(100); {
		case r < 50: // small PUT, 1–64 KiB
			body := make([]byte, 1*KiB+rng.Intn(63*KiB+1))
			rng.Read(body)
			v = version{sum: sha256.Sum256(body), size: len(body)}
			_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
			counter = &st.puts
		case r < 72: // large PUT, 100 KiB–3 MiB
			body := make([]byte, 100*KiB+rng.Intn(3*MiB-100*KiB+1))
			rng.Read(body)
			v = version{sum: sha256.Sum256(body), size: len(body)}
			_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
			counter = &st.bigPuts
		case r < 90: // DELETE
			v = version{absent: true}
			_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
			counter = &st.deletes
		default: // multipart: one full part and a small last one
			body := make([]byte, partSize+1+rng.Intn(512*KiB))
			rng.Read(body)
			v = version{sum: sha256.Sum256(body), size: len(body)}
			err = multipart(ctx, c, bucket, key, body)
			counter = &st.multiparts
		}
		if err != nil && !killed.Load() && st.refusedForSpace(err) {
			continue // refused before anything was stored: the key keeps what it had
		}
		mu.Lock()
		if err == nil {
			state[key].ack(v)
			st.acked(counter)
		} else {
			state[key].uncertain(v)
			st.unacked.Add(1)
		}
		mu.Unlock()
		if err != nil {
			if killed.Load() || ctx.Err() != nil {
				return
			}
			// The server was alive and refused or failed a plain request: a bug, not a crash effect.
			st.errsAlive.Add(1)
			t.Errorf("worker %d: %s failed while the server was up: %v", w, key, err)
			return
		}
	}
}

func multipart(ctx context.Context, c *s3.Client, bucket, key string, body []byte) error {
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return err
	}
	var parts []types.CompletedPart
	for n, off := int32(1), 0; off < len(body); n, off = n+1, off+partSize {
		part := body[off:min(off+partSize, len(body))]
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: cr.UploadId,
			PartNumber: aws.Int32(n), Body: bytes.NewReader(part)})
		if err != nil {
			return err
		}
		parts = append(parts, types.CompletedPart{ETag: up.ETag, PartNumber: aws.Int32(n)})
	}
	_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key),
		UploadId: cr.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	return err
}

func verify(ctx context.Context, t *testing.T, c *s3.Client, bucket string, state map[string]*keyState, it int) {
	keys := make([]string, 0, len(state))
	for k := range state {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	present := map[string]int{}
	var inFlightNew, inFlightOld int
	for _, key := range keys {
		ks := state[key]
		var got version
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			var ae smithy.APIError
			if !errors.As(err, &ae) || ae.ErrorCode() != "NoSuchKey" {
				t.Errorf("iteration %d: GET %s after restart: %v", it, key, err)
				continue
			}
			got = version{absent: true}
		} else {
			b, err := e2e.ReadAllClose(out.Body)
			if err != nil {
				t.Errorf("iteration %d: GET %s after restart: reading body: %v", it, key, err)
				continue
			}
			got = version{sum: sha256.Sum256(b), size: len(b)}
			if !isExpiryKey(key) {
				// An expiring version may be deleted by the expirer at any moment, also
				// between this GET and the listing below: these keys are checked by GET.
				present[key] = len(b)
			}
		}
		if !ks.allows(got) {
			t.Errorf("iteration %d: %s reads back as %v; allowed: %v", it, key, got, ks.allowed)
		} else if n := len(ks.allowed); n > 1 {
			if (&keyState{allowed: ks.allowed[n-1:]}).allows(got) {
				inFlightNew++
			} else {
				inFlightOld++
			}
		}
		ks.ack(got) // what is there now is the known state for the next iteration
		if !got.absent && ks.expiring[got.sum] {
			ks.uncertain(version{absent: true})
		}
	}

	t.Logf("iteration %d: after restart %d keys verified; operations in flight at the kill left %d new and %d old versions",
		it, len(keys), inFlightNew, inFlightOld)

	// Listing must agree with the GETs; it may take a moment to settle after the restart, which
	// is waited for (the bound is a safety net, not a threshold).
	var diff string
	for deadline := time.Now().Add(patience); ; {
		listed := map[string]int{}
		p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Errorf("iteration %d: ListObjectsV2 after restart: %v", it, err)
				return
			}
			for _, o := range page.Contents {
				if !isExpiryKey(aws.ToString(o.Key)) {
					listed[aws.ToString(o.Key)] = int(aws.ToInt64(o.Size))
				}
			}
		}
		diff = ""
		for k, n := range present {
			if m, ok := listed[k]; !ok {
				diff += fmt.Sprintf("\n  %s: GET has %d bytes, listing lacks it", k, n)
			} else if m != n {
				diff += fmt.Sprintf("\n  %s: GET has %d bytes, listing says %d", k, n, m)
			}
		}
		for k, m := range listed {
			if _, ok := present[k]; !ok {
				diff += fmt.Sprintf("\n  %s: listed with %d bytes, GET says NoSuchKey", k, m)
			}
		}
		if diff == "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if diff != "" {
		t.Errorf("iteration %d: listing disagrees with GET after restart:%s", it, diff)
	}
}

func expiryKey(k int) string      { return fmt.Sprintf("x/k%02d", k) }
func isExpiryKey(key string) bool { return len(key) > 2 && key[:2] == "x/" }

// runExpiryWorker writes its keys through Swift: an object that expires within a second, then,
// after a random pause (often after the expiry is due, while the expirer works on it), an
// overwrite without an expiry. The expiring version is allowed to vanish; the acknowledged
// overwrite must stay, however the expirer's pass and the kill fall.
func runExpiryWorker(ctx context.Context, t *testing.T, srv *e2e.Server, bucket string, rng *rand.Rand,
	state map[string]*keyState, mu *sync.Mutex, killed *atomic.Bool, st *stats) {
	token, storage, err := swiftAuth(ctx, srv)
	if err != nil {
		if !killed.Load() {
			t.Errorf("expiry worker: Swift auth: %v", err)
		}
		return
	}
	for ctx.Err() == nil {
		key := expiryKey(rng.Intn(keysPerWork))
		expiring := rng.Intn(2) == 0
		body := make([]byte, 1*KiB+rng.Intn(200*KiB))
		rng.Read(body)
		v := version{sum: sha256.Sum256(body), size: len(body)}
		hdr := map[string]string{}
		if expiring {
			hdr["X-Delete-After"] = "1"
		}
		err := swiftPut(ctx, token, storage+"/"+bucket+"/"+key, hdr, body)
		if err != nil && st.fullDisk && !killed.Load() && errors.Is(err, errSwiftFull) {
			st.refused.Add(1)
			continue
		}
		mu.Lock()
		if expiring {
			if state[key].expiring == nil {
				state[key].expiring = map[[32]byte]bool{}
			}
			state[key].expiring[v.sum] = true
		}
		switch {
		case errors.Is(err, errSwiftOlder) && !killed.Load():
			// Nothing stored; the newer write was the expirer's deletion of the expiring
			// version before it: the key may be absent now.
			state[key].uncertain(version{absent: true})
			st.unacked.Add(1)
			err = nil
		case err == nil && expiring:
			state[key].ack(v)
			state[key].uncertain(version{absent: true}) // it may expire before the check
			st.expiring.Add(1)
		case err == nil:
			state[key].ack(v)
			st.overwrites.Add(1)
		default:
			state[key].uncertain(v)
			if expiring {
				state[key].uncertain(version{absent: true})
			}
			st.unacked.Add(1)
		}
		mu.Unlock()
		if err != nil {
			if !killed.Load() && ctx.Err() == nil {
				st.errsAlive.Add(1)
				t.Errorf("expiry worker: PUT %s failed while the server was up: %v", key, err)
			}
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(rng.Intn(1000)) * time.Millisecond):
		}
	}
}

// swiftAuth logs in as the root user over Swift's v1 auth.
func swiftAuth(ctx context.Context, srv *e2e.Server) (token, storageURL string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.Endpoint+"/auth/v1.0", nil)
	if err != nil {
		return "", "", err
	}
	req.Header.Set("X-Auth-User", "root:root")
	req.Header.Set("X-Auth-Key", srv.SecretKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", "", err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("auth: status %d", resp.StatusCode)
	}
	return resp.Header.Get("X-Auth-Token"), resp.Header.Get("X-Storage-Url"), nil
}

func swiftPut(ctx context.Context, token, url string, hdr map[string]string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("X-Auth-Token", token)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusInsufficientStorage {
		return errSwiftFull
	}
	if resp.StatusCode == http.StatusAccepted {
		return errSwiftOlder
	}
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("PUT: status %d", resp.StatusCode)
	}
	return nil
}

// errSwiftFull is a Swift PUT answered 507: nothing was stored.
var errSwiftFull = errors.New("PUT: 507 Insufficient Storage")

// errSwiftOlder is a Swift PUT answered 202: a write with a newer timestamp was there first, so
// this one stored nothing (Swift's newest-wins). For an expiry key that newer write is the
// expirer's deletion, stamped with the expiry time: an overwrite that began before the expiry
// was due and reached the node after the expirer lost to it (it happens on a slow machine).
var errSwiftOlder = errors.New("PUT: 202 Accepted, a newer write won")

func raceKey(k int) string { return fmt.Sprintf("m/k%02d", k) }

// runRaceWorker uploads one part, then sends at once a CompleteMultipartUpload, an
// AbortMultipartUpload and (every other time) a re-upload of the part with other bytes. While
// the server is up exactly one of Complete and Abort succeeds and the other answers
// NoSuchUpload; a completed object holds the part the Complete named, whatever the late part did.
func runRaceWorker(ctx context.Context, t *testing.T, c *s3.Client, bucket string, rng *rand.Rand,
	state map[string]*keyState, mu *sync.Mutex, killed *atomic.Bool, st *stats) {
	for ctx.Err() == nil {
		key := raceKey(rng.Intn(keysPerWork))
		body := make([]byte, 1*KiB+rng.Intn(256*KiB))
		rng.Read(body)
		v := version{sum: sha256.Sum256(body), size: len(body)}
		cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		var up *s3.UploadPartOutput
		if err == nil {
			up, err = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: cr.UploadId,
				PartNumber: aws.Int32(1), Body: bytes.NewReader(body)})
		}
		if err != nil {
			if !killed.Load() && ctx.Err() == nil && st.refusedForSpace(err) {
				continue
			}
			if !killed.Load() && ctx.Err() == nil {
				st.errsAlive.Add(1)
				t.Errorf("race worker: starting an upload of %s failed while the server was up: %v", key, err)
			}
			return
		}
		var completeErr, abortErr error
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, completeErr = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key),
				UploadId: cr.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: up.ETag, PartNumber: aws.Int32(1)}}}})
		}()
		go func() {
			defer wg.Done()
			_, abortErr = c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: cr.UploadId})
		}()
		var lateErr error = errors.New("not sent")
		if rng.Intn(2) == 0 {
			late := make([]byte, len(body))
			rng.Read(late)
			// It may land before the Complete reads the parts (the Complete then answers
			// InvalidPart, as S3 does for a part replaced since it was listed) or after (200
			// or NoSuchUpload): either way it must not change a completed object.
			_, lateErr = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: cr.UploadId,
				PartNumber: aws.Int32(1), Body: bytes.NewReader(late)})
		}
		wg.Wait()
		code := func(err error) string {
			var ae smithy.APIError
			if errors.As(err, &ae) {
				return ae.ErrorCode()
			}
			return ""
		}
		lostWith := func(err error) bool {
			return code(err) == "NoSuchUpload" || lateErr == nil && code(err) == "InvalidPart" ||
				st.fullDisk && code(err) == "InsufficientStorage"
		}
		mu.Lock()
		var fault string
		switch {
		case lostWith(completeErr) && lostWith(abortErr) && st.fullDisk:
			st.refused.Add(1) // both refused for space: nothing changed
		case completeErr == nil && lostWith(abortErr):
			state[key].ack(v)
			st.raceCompleted.Add(1)
		case abortErr == nil && lostWith(completeErr):
			st.raceAborted.Add(1) // the key keeps what it had
		case completeErr == nil && abortErr == nil:
			fault = "both the Complete and the Abort succeeded"
			state[key].ack(v)
		case completeErr == nil:
			state[key].ack(v)
			fault = fmt.Sprintf("the Abort that lost answered %v, not NoSuchUpload", abortErr)
		default:
			state[key].uncertain(v)
			st.unacked.Add(1)
			fault = "the Complete failed and the Abort did not win, or the Abort won and the Complete did not answer NoSuchUpload"
		}
		mu.Unlock()
		if killed.Load() || ctx.Err() != nil {
			return
		}
		if fault != "" {
			st.errsAlive.Add(1)
			t.Errorf("race worker: %s: %s while the server was up (Complete: %v; Abort: %v)", key, fault, completeErr, abortErr)
			return
		}
	}
}
