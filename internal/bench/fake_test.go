package bench

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/s3/sigv4"
)

// fakeS3 is the smallest S3 that exercises the load client: it verifies every signature with
// the same sigv4 package the real front end uses (so escaping and signing mistakes show up as
// 403s), keeps objects in memory and pages ListObjectsV2. failEvery > 0 answers every n-th
// object PUT with 503 SlowDown, to test error counting.
type fakeS3 struct {
	mu        sync.Mutex
	buckets   map[string]map[string][]byte
	failEvery int64
	puts      atomic.Int64
}

const (
	fakeAK = "bench-ak"
	fakeSK = "bench-sk"
)

func newFakeS3(t *testing.T) (*fakeS3, string) {
	f := &fakeS3{buckets: map[string]map[string][]byte{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func writeErr(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<Error><Code>%s</Code><Message>fake</Message></Error>", code)
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	store := sigv4.StaticStore{fakeAK: {AccessKey: fakeAK, SecretKey: fakeSK}}
	auth, err := sigv4.Verify(r.Context(), r, store, time.Now(), nil)
	if err != nil {
		code := "AccessDenied"
		switch {
		case errors.Is(err, sigv4.ErrSignatureDoesNotMatch):
			code = "SignatureDoesNotMatch"
		case errors.Is(err, sigv4.ErrInvalidAccessKeyID):
			code = "InvalidAccessKeyId"
		}
		writeErr(w, http.StatusForbidden, code)
		return
	}
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	f.mu.Lock()
	defer f.mu.Unlock()
	objs, ok := f.buckets[bucket]
	switch {
	case r.Method == http.MethodPut && key == "":
		if ok {
			writeErr(w, http.StatusConflict, "BucketAlreadyOwnedByYou")
			return
		}
		f.buckets[bucket] = map[string][]byte{}
	case !ok:
		writeErr(w, http.StatusNotFound, "NoSuchBucket")
	case r.Method == http.MethodPut:
		if n := f.puts.Add(1); f.failEvery > 0 && n%f.failEvery == 0 {
			writeErr(w, http.StatusServiceUnavailable, "SlowDown")
			return
		}
		body, err := auth.Body(r.Body)
		if err != nil {
			writeErr(w, http.StatusBadRequest, "InvalidRequest")
			return
		}
		data, err := io.ReadAll(body)
		if err != nil {
			writeErr(w, http.StatusBadRequest, "IncompleteBody")
			return
		}
		objs[key] = data
	case r.Method == http.MethodGet && key != "":
		data, ok := objs[key]
		if !ok {
			writeErr(w, http.StatusNotFound, "NoSuchKey")
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data)
	case r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2":
		f.list(w, r, objs)
	default:
		writeErr(w, http.StatusNotImplemented, "NotImplemented")
	}
}

// list pages with the last key of the page as the continuation token.
func (f *fakeS3) list(w http.ResponseWriter, r *http.Request, objs map[string][]byte) {
	q := r.URL.Query()
	maxKeys, _ := strconv.Atoi(q.Get("max-keys"))
	var keys []string
	for k := range objs {
		if strings.HasPrefix(k, q.Get("prefix")) && k > q.Get("continuation-token") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	type content struct {
		Key string `xml:"Key"`
	}
	res := struct {
		XMLName     xml.Name  `xml:"ListBucketResult"`
		IsTruncated bool      `xml:"IsTruncated"`
		NextToken   string    `xml:"NextContinuationToken,omitempty"`
		Contents    []content `xml:"Contents"`
	}{}
	if len(keys) > maxKeys {
		keys, res.IsTruncated = keys[:maxKeys], true
		res.NextToken = keys[len(keys)-1]
	}
	for _, k := range keys {
		res.Contents = append(res.Contents, content{k})
	}
	w.Header().Set("Content-Type", "application/xml")
	xml.NewEncoder(w).Encode(res)
}

func (f *fakeS3) keys(bucket string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ks []string
	for k := range f.buckets[bucket] {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
