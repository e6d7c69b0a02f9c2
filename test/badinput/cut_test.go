package badinput

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/test/e2e"
)

// objectFiles lists the engine's committed data files (below objects/, temp files excluded).
func (s *testServer) objectFiles() []string {
	s.t.Helper()
	var out []string
	for _, f := range dataFiles(s.t, filepath.Join(s.data, "devices", "d0", "objects")) {
		if !strings.HasPrefix(f, "tmp"+string(filepath.Separator)) {
			out = append(out, f)
		}
	}
	return out
}

// cutUpload sends head and then part of a body on a raw connection and vanishes: with
// halfClose it shuts its sending side and returns the server's answer, otherwise it closes the
// connection outright. It returns once the server has finished serving the request (op counted).
func (s *testServer) cutUpload(op string, head, partial []byte, halfClose bool) (response, bool) {
	s.t.Helper()
	before := s.opCount(op)
	c := s.dial()
	defer c.Close()
	if _, err := c.Write(head); err != nil {
		s.t.Fatalf("write head: %v", err)
	}
	if _, err := c.Write(partial); err != nil {
		s.t.Fatalf("write partial body: %v", err)
	}
	var r response
	var got bool
	if halfClose {
		c.CloseWrite()
		c.SetReadDeadline(time.Now().Add(60 * time.Second)) // a safety net, not a threshold
		var err error
		r, err = readRawResponse(s.t, c, nil)
		got = err == nil
	} else {
		c.Close()
	}
	s.waitOpCount(op, before+1)
	return r, got
}

// TestClientVanishesMidUpload cuts uploads short in every way a client can (plain PUT of an
// inline-size and a file-size object, an aws-chunked PUT inside a chunk, an UploadPart), by a
// half close (the server sees EOF and must answer IncompleteBody) and by a full close: the old
// version of the key stays intact, no new object or part appears, no temp file remains, and after
// a restart no orphan data file is left either.
func TestClientVanishesMidUpload(t *testing.T) {
	s := startServer(t, "")
	const bucket = "cut"
	s.createBucket(bucket)

	type variant struct {
		name string
		// request builds the signed head and the whole framed body of an upload of data to key.
		request func(t *testing.T, key string, data []byte) (head, body []byte, cutAt int, op string)
	}
	plain := func(t *testing.T, key string, data []byte) ([]byte, []byte, int, string) {
		req := newRequest(t, http.MethodPut, s.url(bucket, key, ""), nil)
		req.ContentLength = int64(len(data))
		sign(t, req, rootCred, time.Now(), data)
		return rawHead(req, int64(len(data))), data, len(data) / 2, "PutObject"
	}
	chunked := func(t *testing.T, key string, data []byte) ([]byte, []byte, int, string) {
		chunk := 64 * KiB
		if len(data) < 4*chunk {
			chunk = len(data) / 4
		}
		framed := chunkedLength(len(data), chunk)
		req := newRequest(t, http.MethodPut, s.url(bucket, key, ""), nil)
		req.ContentLength = int64(framed)
		cs := newChunkSigner(t, req, len(data), time.Now())
		var body []byte
		cutAt := 0
		for i, off := 0, 0; off < len(data); i, off = i+1, off+chunk {
			frame := cs.chunk(data[off:min(off+chunk, len(data))])
			if i == 2 {
				cutAt = len(body) + len(frame)/2 // inside the third chunk's data
			}
			body = append(body, frame...)
		}
		body = append(body, cs.chunk(nil)...)
		if len(body) != framed {
			t.Fatalf("framed %d bytes, computed %d", len(body), framed)
		}
		return rawHead(req, int64(framed)), body, cutAt, "PutObject"
	}
	variants := []variant{{"plain", plain}, {"aws-chunked", chunked}}

	for _, v := range variants {
		for _, size := range []int{4 * KiB, 2 * MiB} {
			for _, halfClose := range []bool{true, false} {
				how := "close"
				if halfClose {
					how = "half-close"
				}
				name := fmt.Sprintf("%s/%d/%s", v.name, size, how)
				t.Run(name, func(t *testing.T) {
					key := "obj-" + strings.ReplaceAll(name, "/", "-")
					old := randomBytes(size)
					s.put(bucket, key, old)
					before := s.snapshot(bucket)
					files := s.objectFiles()

					head, body, cutAt, op := v.request(t, key, randomBytes(size))
					r, got := s.cutUpload(op, head, body[:cutAt], halfClose)
					if halfClose {
						if !got {
							t.Errorf("no answer after the half close")
						} else {
							expectError(t, "PUT cut short", r, http.StatusBadRequest, "IncompleteBody")
						}
					}
					s.expectObject("after the cut upload", bucket, key, old)
					s.expectUnchanged("after the cut upload", bucket, before)
					if tmp := s.tmpFiles(); len(tmp) != 0 {
						t.Errorf("temp files left after the cut upload: %v", tmp)
					}
					if got := s.objectFiles(); !slices.Equal(got, files) {
						t.Errorf("data files changed after the cut upload:\nbefore %v\nafter  %v", files, got)
					}
				})
			}
		}
	}

	t.Run("UploadPart", func(t *testing.T) {
		const key = "multipart"
		old := randomBytes(4 * KiB)
		s.put(bucket, key, old)
		r := s.call(http.MethodPost, bucket, key, "uploads", nil)
		if r.Status != http.StatusOK {
			t.Fatalf("CreateMultipartUpload: %s", r)
		}
		var init struct {
			UploadID string `xml:"UploadId"`
		}
		if err := xml.Unmarshal(r.Body, &init); err != nil || init.UploadID == "" {
			t.Fatalf("CreateMultipartUpload answer %q: %v", r.Body, err)
		}
		part1 := randomBytes(1 * MiB)
		r = s.call(http.MethodPut, bucket, key, "partNumber=1&uploadId="+init.UploadID, part1)
		if r.Status != http.StatusOK {
			t.Fatalf("UploadPart 1: %s", r)
		}
		etag1 := r.Header.Get("ETag")
		before := s.snapshot(bucket)
		files := s.objectFiles()

		for _, n := range []int{1, 2} { // overwrite an existing part; a new part
			for _, halfClose := range []bool{true, false} {
				data := randomBytes(2 * MiB)
				req := newRequest(t, http.MethodPut, s.url(bucket, key, fmt.Sprintf("partNumber=%d&uploadId=%s", n, init.UploadID)), nil)
				req.ContentLength = int64(len(data))
				sign(t, req, rootCred, time.Now(), data)
				r, got := s.cutUpload("UploadPart", rawHead(req, int64(len(data))), data[:len(data)/2], halfClose)
				if halfClose {
					if !got {
						t.Errorf("part %d: no answer after the half close", n)
					} else {
						expectError(t, fmt.Sprintf("UploadPart %d cut short", n), r, http.StatusBadRequest, "IncompleteBody")
					}
				}
			}
		}
		r = s.call(http.MethodGet, bucket, key, "uploadId="+init.UploadID, nil)
		var parts struct {
			Parts []struct {
				PartNumber int    `xml:"PartNumber"`
				ETag       string `xml:"ETag"`
				Size       int64  `xml:"Size"`
			} `xml:"Part"`
		}
		if r.Status != http.StatusOK || xml.Unmarshal(r.Body, &parts) != nil {
			t.Fatalf("ListParts: %s", r)
		}
		if len(parts.Parts) != 1 || parts.Parts[0].PartNumber != 1 || parts.Parts[0].ETag != etag1 || parts.Parts[0].Size != int64(len(part1)) {
			t.Errorf("ListParts after cut uploads: %+v, want only part 1 %s of %d bytes", parts.Parts, etag1, len(part1))
		}
		s.expectUnchanged("after the cut parts", bucket, before)
		if tmp := s.tmpFiles(); len(tmp) != 0 {
			t.Errorf("temp files left after the cut parts: %v", tmp)
		}
		if got := s.objectFiles(); !slices.Equal(got, files) {
			t.Errorf("data files changed after the cut parts:\nbefore %v\nafter  %v", files, got)
		}

		// The upload still completes with what was acknowledged.
		complete := fmt.Sprintf(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>%s</ETag></Part></CompleteMultipartUpload>`, etag1)
		r = s.call(http.MethodPost, bucket, key, "uploadId="+init.UploadID, []byte(complete))
		if r.Status != http.StatusOK || strings.Contains(string(r.Body), "<Error>") {
			t.Fatalf("CompleteMultipartUpload: %s", r)
		}
		s.expectObject("after completing", bucket, key, part1)
	})

	// A restart finds nothing to clean up and loses nothing.
	before := s.snapshot(bucket)
	files := s.objectFiles()
	s.restart()
	s.expectUnchanged("after a restart", bucket, before)
	if tmp := s.tmpFiles(); len(tmp) != 0 {
		t.Errorf("temp files after a restart: %v", tmp)
	}
	if got := s.objectFiles(); !slices.Equal(got, files) {
		t.Errorf("the restart changed the data files (orphans collected?):\nbefore %v\nafter  %v", files, got)
	}
}

// TestKilledMidUpload kills the real server (SIGKILL) while a client is half way through a
// file-size PUT, with the temp file on disk: after a restart the temp file is gone, the old
// version of the key reads back intact, and no orphan data file is left.
func TestKilledMidUpload(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	proc := e2e.Start(t, e2e.Options{DataDir: data, AccessKey: accessKey, SecretKey: secretKey})
	s := attach(t, proc.Endpoint, data)
	const bucket = "killed"
	s.createBucket(bucket)
	old := randomBytes(2 * MiB)
	s.put(bucket, "victim", old)
	before := s.snapshot(bucket)
	files := s.objectFiles()

	body := randomBytes(2 * MiB)
	req := newRequest(t, http.MethodPut, s.url(bucket, "victim", ""), nil)
	req.ContentLength = int64(len(body))
	sign(t, req, rootCred, time.Now(), body)
	c := s.dial()
	defer c.Close()
	c.Write(rawHead(req, int64(len(body))))
	c.Write(body[:len(body)/2])
	// Wait until the engine has the temp file open (the bound is only a safety net).
	deadline := time.Now().Add(60 * time.Second)
	for len(s.tmpFiles()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no temp file appeared for a PUT half sent")
		}
		time.Sleep(5 * time.Millisecond)
	}
	proc.Kill()
	c.Close()

	proc = e2e.Start(t, e2e.Options{DataDir: data, AccessKey: accessKey, SecretKey: secretKey})
	s = attach(t, proc.Endpoint, data)
	s.expectUnchanged("after SIGKILL mid-upload and a restart", bucket, before)
	s.expectObject("after SIGKILL mid-upload and a restart", bucket, "victim", old)
	if tmp := s.tmpFiles(); len(tmp) != 0 {
		t.Errorf("temp files left after a restart: %v", tmp)
	}
	if got := s.objectFiles(); !slices.Equal(got, files) {
		t.Errorf("data files after a restart:\nbefore %v\nafter  %v", files, got)
	}
}
