package badinput

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// An empty PUT with Expect: 100-continue gets 100 Continue before its final status, as S3 sends
// it: botocore misreads the next request on the connection otherwise (aws s3 sync of an empty
// file hung until the read timeout). Two PUTs on one raw connection, as botocore sends them.
func TestExpectContinueOnEmptyBody(t *testing.T) {
	s := startServer(t, "")
	s.createBucket("expect")
	conn, err := net.Dial("tcp", s.host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	rd := bufio.NewReader(conn)
	for _, body := range []string{"", "ten bytes!"} {
		req := newRequest(t, http.MethodPut, s.url("expect", "k"+body, ""), []byte(body))
		req.Header.Set("Expect", "100-continue")
		sign(t, req, rootCred, time.Now(), []byte(body))
		// Headers first; the body only after 100 Continue, as a careful client does.
		var head strings.Builder
		head.WriteString("PUT " + req.URL.RequestURI() + " HTTP/1.1\r\nHost: " + s.host + "\r\n")
		for k, vs := range req.Header {
			head.WriteString(k + ": " + vs[0] + "\r\n")
		}
		head.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
		if _, err := conn.Write([]byte(head.String())); err != nil {
			t.Fatal(err)
		}
		line, err := rd.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
			t.Fatalf("body %q: first answer %q, %v; want 100 Continue", body, line, err)
		}
		for {
			l, err := rd.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if l == "\r\n" {
				break
			}
		}
		if _, err := conn.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(rd, req)
		if err != nil {
			t.Fatalf("body %q: final answer: %v", body, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("body %q: status %d", body, resp.StatusCode)
		}
	}
	s.expectObject("empty PUT", "expect", "k", []byte{})
	s.expectObject("second PUT on the connection", "expect", "kten bytes!", []byte("ten bytes!"))
}
