package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/cairn-store/cairn/internal/microstore"
	"github.com/cairn-store/cairn/internal/server"
	"github.com/cairn-store/cairn/internal/testserver"
	"github.com/cairn-store/cairn/internal/workload"
)

// The microstores' description through the real server: made, changed and removed with
// `cairn microstore`, each change checked against the others and against the store's storage
// policies, each a new generation of the document the store keeps.
func TestMicrostoreCommands(t *testing.T) {
	for _, k := range []string{"CAIRN_ENDPOINT", "CAIRN_ACCESS_KEY", "CAIRN_SECRET_KEY"} {
		t.Setenv(k, "")
	}
	endpoint := testserver.Start(t, "ms-root", "ms-root-secret")
	ms := func(args ...string) (string, error) {
		return runCairn(t, append([]string{"microstore", "--endpoint", endpoint, "--access-key", "ms-root", "--secret-key", "ms-root-secret"}, args...)...)
	}
	must := func(args ...string) microstore.Description {
		t.Helper()
		out, err := ms(append(args, "--json")...)
		if err != nil {
			t.Fatalf("cairn microstore %s: %v", strings.Join(args, " "), err)
		}
		var d microstore.Description
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		return d
	}
	if d := must("list"); d.Generation != 0 || len(d.Microstores) != 0 {
		t.Fatalf("a new store's microstores: %+v", d)
	}
	d := must("create", "small", "--policy", "policy-0", "--proxy", "127.0.0.1:9001", "--class", "A", "--class", "b")
	if d.Generation != 1 || len(d.Microstores) != 1 {
		t.Fatalf("after create: %+v", d)
	}
	m := d.Microstores[0]
	if m.Name != "small" || m.Policy != "Policy-0" || len(m.Proxies) != 1 || len(m.Classes) != 2 || m.Classes[1] != workload.SmallWrites {
		t.Errorf("created %+v (the policy by its own name)", m)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "other", "--policy", "Policy-0"}, "MicrostoreConflict"},
		{[]string{"create", "small", "--policy", "Policy-0"}, "MicrostoreConflict"},
		{[]string{"create", "big", "--policy", "nope"}, "no storage policy"},
		{[]string{"create", "Big", "--policy", "Policy-0"}, "InvalidArgument"},
		{[]string{"create", "big", "--policy", "Policy-0", "--class", "E"}, "one of A, B, C, D"},
		{[]string{"resize", "medium", "--proxy", "h:1"}, "NoSuchMicrostore"},
		{[]string{"resize", "small", "--proxy", "no-port"}, "InvalidArgument"},
		{[]string{"show", "medium"}, "NoSuchMicrostore"},
		{[]string{"pool", "--proxy", "127.0.0.1:9001"}, "MicrostoreConflict"},
		{[]string{"pool", "--proxy", "no-port"}, "InvalidArgument"},
	} {
		if out, err := ms(bad.args...); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("cairn microstore %s: %v (%q), want an error naming %s", strings.Join(bad.args, " "), err, out, bad.want)
		}
	}
	if d := must("resize", "small", "--proxy", "127.0.0.1:9002", "--proxy", "127.0.0.1:9003"); d.Generation != 2 || len(d.Microstores[0].Proxies) != 2 {
		t.Errorf("after resize: %+v", d)
	}
	if d := must("assign", "small", "--class", "C"); d.Generation != 3 || len(d.Microstores[0].Classes) != 1 || d.Microstores[0].Classes[0] != workload.LargeReads {
		t.Errorf("after assign: %+v", d)
	}
	if d := must("pool", "--proxy", "127.0.0.1:9100", "--proxy", "127.0.0.1:9101"); d.Generation != 4 || len(d.Pool) != 2 {
		t.Errorf("after pool: %+v", d)
	}
	if out, err := ms("list"); err != nil || !strings.Contains(out, "(free pool)") || !strings.Contains(out, "127.0.0.1:9100,127.0.0.1:9101") {
		t.Errorf("list with a pool printed (%v):\n%s", err, out)
	}
	if out, err := ms("plan"); err != nil || !strings.Contains(out, "MICROSTORE") {
		t.Errorf("plan printed (%v):\n%s", err, out)
	}
	if d := must("pool"); d.Generation != 5 || len(d.Pool) != 0 {
		t.Errorf("after emptying the pool: %+v", d)
	}
	out, err := ms("show", "small")
	if err != nil || !strings.Contains(out, "127.0.0.1:9002,127.0.0.1:9003") || !strings.Contains(out, "Policy-0") {
		t.Errorf("show printed (%v):\n%s", err, out)
	}
	if d := must("list"); d.Generation != 5 {
		t.Errorf("the store keeps generation %d, want 5", d.Generation)
	}
	if d := must("delete", "small"); d.Generation != 6 || len(d.Microstores) != 0 {
		t.Errorf("after delete: %+v", d)
	}
	if _, err := ms("delete", "small"); err == nil || !strings.Contains(err.Error(), "NoSuchMicrostore") {
		t.Errorf("deleting it again: %v", err)
	}
	if _, err := runCairn(t, "microstore", "--endpoint", endpoint, "--access-key", "nobody", "--secret-key", "x", "list"); err == nil {
		t.Error("an unknown key listed the microstores")
	}
}

// A proxy named by a microstore under its advertised address (--advertise: behind a NAT, or
// listening on 0.0.0.0) knows itself there: it serves that microstore's buckets rather than
// passing them on. The same server, once its microstore names another proxy, passes them to it
// (here refusing connections, so 503): the routing is on, and the first answer was the
// advertised name's.
func TestAdvertisedProxyServesItsMicrostore(t *testing.T) {
	for _, k := range []string{"CAIRN_ENDPOINT", "CAIRN_ACCESS_KEY", "CAIRN_SECRET_KEY"} {
		t.Setenv(k, "")
	}
	const self = "proxy-a.invalid:8080"
	endpoint := testserver.StartConfig(t, server.Config{RootAccessKey: "adv-root", RootSecretKey: "adv-root-secret", Advertise: self})
	ms := func(args ...string) {
		t.Helper()
		if out, err := runCairn(t, append([]string{"microstore", "--endpoint", endpoint, "--access-key", "adv-root", "--secret-key", "adv-root-secret"}, args...)...); err != nil {
			t.Fatalf("cairn microstore %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	ctx := context.Background()
	c := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true, RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("adv-root", "adv-root-secret", "")})
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("pages")}); err != nil {
		t.Fatal(err)
	}
	ms("create", "small", "--policy", "Policy-0", "--proxy", self)
	put := func(key string) error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("pages"), Key: aws.String(key), Body: bytes.NewReader([]byte("a page"))})
		return err
	}
	if err := put("index.html"); err != nil {
		t.Fatalf("PUT to the microstore's own proxy, named by its advertised address: %v", err)
	}
	ms("resize", "small", "--proxy", "127.0.0.1:1") // refused at once: no name to resolve
	var re *smithyhttp.ResponseError
	if err := put("about.html"); !errors.As(err, &re) || re.HTTPStatusCode() != 503 {
		t.Fatalf("PUT once the microstore names another, unreachable proxy: %v, want 503 (passed on)", err)
	}
}
