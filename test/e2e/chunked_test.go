package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// awsChunkedBody frames data as aws-chunked with an unsigned trailer, the way boto3 and the Go SDK
// send a PutObject with their default CRC32 over HTTPS (over plain HTTP they send a header).
func awsChunkedBody(data []byte, chunk int, trailerName, trailerValue string) []byte {
	var b bytes.Buffer
	for off := 0; off < len(data); off += chunk {
		part := data[off:min(off+chunk, len(data))]
		fmt.Fprintf(&b, "%x\r\n", len(part))
		b.Write(part)
		b.WriteString("\r\n")
	}
	fmt.Fprintf(&b, "0\r\n%s:%s\r\n\r\n", trailerName, trailerValue)
	return b.Bytes()
}

func TestAWSChunkedUnsignedTrailer(t *testing.T) {
	srv := StartServer(t, t.TempDir())
	ctx := Context(t)
	c := srv.S3Client()
	bucket := newBucket(t, ctx, c, "chunked")

	put := func(key string, data []byte, crc string) (*http.Response, string) {
		body := awsChunkedBody(data, 64*KiB, "x-amz-checksum-crc32", crc)
		req, _ := http.NewRequest(http.MethodPut, srv.Endpoint+"/"+bucket+"/"+key, bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Encoding", "aws-chunked")
		req.Header.Set("X-Amz-Decoded-Content-Length", strconv.Itoa(len(data)))
		req.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
		req.Header.Set("X-Amz-Sdk-Checksum-Algorithm", "CRC32")
		resp, err := srv.SignedRequestWithHash(ctx, req, "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
		if err != nil {
			t.Fatalf("PUT %s: %v", key, err)
		}
		b, _ := ReadAllClose(resp.Body)
		return resp, string(b)
	}

	for _, n := range []int{1, 64 * KiB, 300*KiB + 3} {
		data := randBytes(int64(n), n)
		key := fmt.Sprintf("ok-%d", n)
		resp, body := put(key, data, crc32B64(data))
		if resp.StatusCode != http.StatusOK {
			t.Errorf("aws-chunked PUT of %d bytes with a CRC32 trailer: %s\n%s", n, resp.Status, body)
			continue
		}
		if got := resp.Header.Get("X-Amz-Checksum-Crc32"); got != "" && got != crc32B64(data) {
			t.Errorf("aws-chunked PUT of %d bytes: response CRC32 %q, want %q", n, got, crc32B64(data))
		}
		got, out, err := getBytes(ctx, c, bucket, key)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("GET after aws-chunked PUT of %d bytes: err %v, %d bytes, equal %v", n, err, len(got), bytes.Equal(got, data))
			continue
		}
		if ce := aws.ToString(out.ContentEncoding); strings.Contains(ce, "aws-chunked") {
			t.Errorf("GET after aws-chunked PUT: Content-Encoding %q still names aws-chunked", ce)
		}
	}

	data := randBytes(5, 100*KiB)
	resp, body := put("bad-trailer", data, crc32B64([]byte("something else")))
	if resp.StatusCode == http.StatusOK {
		t.Errorf("aws-chunked PUT with a wrong CRC32 trailer succeeded")
	} else if !strings.Contains(body, "BadDigest") && !strings.Contains(body, "InvalidRequest") {
		t.Errorf("aws-chunked PUT with a wrong CRC32 trailer: %s %s, want 400 BadDigest", resp.Status, body)
	}
	if _, _, err := getBytes(ctx, c, bucket, "bad-trailer"); apiCode(err) != "NoSuchKey" {
		t.Errorf("object with a wrong CRC32 trailer was stored (GET err %v)", err)
	}
	_, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("ok-1")})
	if err != nil {
		t.Errorf("HeadObject ok-1: %v", err)
	}
}
