package s3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/cairn-store/cairn/internal/meta"
	"github.com/cairn-store/cairn/internal/nodeclient"
	"github.com/cairn-store/cairn/internal/proxy"
	"github.com/cairn-store/cairn/internal/ring"
	"github.com/cairn-store/cairn/internal/s3/multipart"
	"github.com/cairn-store/cairn/internal/s3/s3core"
	"github.com/cairn-store/cairn/internal/s3/sigv4"
	"github.com/cairn-store/cairn/internal/storage"
)

// The upload sweeper removes what ended uploads left (parts a crash kept from their cleanup,
// parts that arrived after the end), never a part a completed object uses, never a part of an
// open upload, nothing younger than its grace; with an abandon age it aborts old uploads.
func TestUploadSweeper(t *testing.T) {
	ctx := context.Background()
	node, err := storage.Open(storage.Config{Devices: []storage.DeviceConfig{{Name: "d0", Dir: t.TempDir()}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	px, err := proxy.New(proxy.Config{Ring: ring.SingleDevice("local", "d0", 6, ""), Dialer: nodeclient.Local{Client: node}})
	if err != nil {
		t.Fatal(err)
	}
	const ak, sk, account, bucket = "AKIDSWEEP", "sweep-secret", "acct", "sweepb"
	h, err := New(s3core.Config{Proxy: px, Credentials: sigv4.StaticStore{ak: {AccessKey: ak, SecretKey: sk, Account: account, Admin: true}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := awss3.New(awss3.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(ak, sk, ""), Retryer: aws.NopRetryer{}})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err = c.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String(bucket)})
	must(err)

	// "done": completed; a crash kept its cleanup from removing an older attempt of part 1.
	done, err := c.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("done")})
	must(err)
	doneID := aws.ToString(done.UploadId)
	data := bytes.Repeat([]byte("d"), 1000)
	up, err := c.UploadPart(ctx, &awss3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String("done"), UploadId: done.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader(data)})
	must(err)
	_, err = c.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("done"), UploadId: done.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: up.ETag, PartNumber: aws.Int32(1)}}}})
	must(err)
	uploads := s3core.UploadsContainer(bucket)
	putRaw := func(name string) {
		t.Helper()
		_, err := px.PutObject(ctx, meta.ObjectName{Account: account, Container: uploads, Object: name}, meta.Object{Size: 3}, bytes.NewReader([]byte("xyz")), proxy.PutOptions{})
		must(err)
	}
	leftover := multipart.NewPartAttemptName("done", doneID, 1)
	putRaw(leftover)
	// "gone": aborted, but a crash cut the removal of its parts short (old-style part name).
	orphan := multipart.PartName("gone", "GoneUpload", 2)
	putRaw(orphan)
	// "open": an upload in progress, with a part.
	open, err := c.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("open")})
	must(err)
	_, err = c.UploadPart(ctx, &awss3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String("open"), UploadId: open.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader(data)})
	must(err)

	exists := func(name string) bool {
		_, err := px.HeadObject(ctx, meta.ObjectName{Account: account, Container: uploads, Object: name})
		return err == nil
	}
	readsBack := func() {
		t.Helper()
		out, err := c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("done")})
		must(err)
		got, _ := io.ReadAll(out.Body)
		out.Body.Close()
		if !bytes.Equal(got, data) {
			t.Fatalf("completed object after a sweep: %d bytes, want %d", len(got), len(data))
		}
	}
	sweeper := func(now time.Time, abandon time.Duration) *UploadSweeper {
		s, err := h.NewUploadSweeper(UploadSweeperConfig{Accounts: func(context.Context) ([]string, error) { return []string{account}, nil },
			AbandonAfter: abandon, Now: func() time.Time { return now }})
		must(err)
		return s
	}

	// Within the grace nothing goes.
	if st := sweeper(time.Now(), 0).Pass(ctx); st.PartsRemoved != 0 || st.UploadsAborted != 0 {
		t.Fatalf("a pass within the grace removed %+v", st)
	}
	if !exists(leftover) || !exists(orphan) {
		t.Fatal("a pass within the grace removed a part")
	}

	later := time.Now().Add(2 * time.Hour)
	st := sweeper(later, 0).Pass(ctx)
	if st.PartsRemoved != 2 || st.UploadsAborted != 0 {
		t.Fatalf("pass after the grace: %+v, want the 2 leftovers removed and no upload aborted", st)
	}
	if exists(leftover) || exists(orphan) {
		t.Fatal("leftover parts survived the sweep")
	}
	readsBack()
	parts, err := c.ListParts(ctx, &awss3.ListPartsInput{Bucket: aws.String(bucket), Key: aws.String("open"), UploadId: open.UploadId})
	must(err)
	if len(parts.Parts) != 1 {
		t.Fatalf("the open upload's parts after a sweep: %d, want 1", len(parts.Parts))
	}

	// With an abandon age, the open upload is aborted and its part removed.
	st = sweeper(later, time.Hour).Pass(ctx)
	if st.UploadsAborted != 1 || st.PartsRemoved != 1 {
		t.Fatalf("pass with an abandon age: %+v, want 1 upload aborted and its part removed", st)
	}
	_, err = c.ListParts(ctx, &awss3.ListPartsInput{Bucket: aws.String(bucket), Key: aws.String("open"), UploadId: open.UploadId})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "NoSuchUpload" {
		t.Fatalf("ListParts of the abandoned upload after the sweep: %v, want NoSuchUpload", err)
	}
	readsBack()
	l, err := px.ListObjects(ctx, account, uploads, meta.ListOptions{})
	must(err)
	if len(l.Objects) != 1 || l.Objects[0].Name == leftover {
		t.Fatalf("uploads container after the sweeps: %v, want only the completed object's part", l.Objects)
	}
}
