package transfer

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairn-store/cairn/internal/objclient"
)

// UploadOptions say how Upload moves a file.
type UploadOptions struct {
	Options
	ContentType string
	Metadata    map[string]string
	// StateDir holds the state files of multipart uploads in progress (default
	// DefaultStateDir()).
	StateDir string
}

// metadataTimeout bounds the requests that carry no body (start, list parts, complete,
// abort): the stall watchdog guards only bodies, and these must not hang forever either.
const metadataTimeout = 5 * time.Minute

// Upload stores the file src as bucket/key. A file smaller than opts.Threshold goes in one
// PUT; a larger one in parts of opts.PartSize, opts.Concurrency at a time, each read from the
// file with ReadAt as it is sent, so that memory does not grow with the file.
//
// A multipart upload records its upload ID in a state file under opts.StateDir, keyed by the
// store, the object, and the file's absolute path, size and modification time. If the upload
// fails or is interrupted, the state file stays, and the next Upload of the same unchanged file
// to the same object sends only the parts that the store does not already hold with the right
// size and MD5. On success the state file is deleted.
func Upload(ctx context.Context, c objclient.Client, src, bucket, key string, opts UploadOptions) (Result, error) {
	start := time.Now()
	res, err := upload(ctx, c, src, bucket, key, opts)
	res.Elapsed = time.Since(start)
	return res, err
}

func upload(ctx context.Context, c objclient.Client, src, bucket, key string, opts UploadOptions) (Result, error) {
	if err := opts.setDefaults(); err != nil {
		return Result{}, fmt.Errorf("upload: %w", err)
	}
	f, err := os.Open(src)
	if err != nil {
		return Result{}, err // "open SRC: no such file or directory" says it all
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Result{}, err
	}
	if !fi.Mode().IsRegular() {
		return Result{}, fmt.Errorf("%s is not a regular file", src)
	}
	size := fi.Size()
	j := newJob(opts.Options)
	stopProgress := reportProgress(opts.Progress, &j.done, size)
	var res Result
	if size < opts.Threshold {
		res, err = putWhole(ctx, j, c, f, size, bucket, key, opts)
	} else {
		res, err = putParts(ctx, j, c, f, fi, bucket, key, opts)
	}
	stopProgress()
	res.Size = size
	res.Transferred = j.transferred.Load()
	res.Resumed = j.resumed.Load()
	return res, err
}

func putWhole(ctx context.Context, j *job, c objclient.Client, f *os.File, size int64, bucket, key string, opts UploadOptions) (Result, error) {
	res := Result{Parts: 1}
	err := j.move(ctx, func(ctx context.Context, s *stream) error {
		pr, err := c.Put(ctx, bucket, key, s.reader(io.NewSectionReader(f, 0, size)), size,
			objclient.PutOptions{ContentType: opts.ContentType, Metadata: opts.Metadata})
		res.ETag = pr.ETag
		return err
	})
	if err != nil {
		return res, fmt.Errorf("uploading %s to %s/%s: %w", f.Name(), bucket, key, asInterruption(err))
	}
	return res, nil
}

// multipartUpload is one multipart upload in progress, and where its state is recorded.
type multipartUpload struct {
	state     uploadState
	statePath string
	have      map[int]objclient.Part // parts the store already holds, by number
}

func putParts(ctx context.Context, j *job, c objclient.Client, f *os.File, fi os.FileInfo, bucket, key string, opts UploadOptions) (Result, error) {
	size := fi.Size()
	src := f.Name()
	fail := func(err error) error {
		return fmt.Errorf("uploading %s to %s/%s: %w", src, bucket, key, asInterruption(err))
	}
	mu, err := resumeOrStart(ctx, c, f, fi, bucket, key, opts)
	if err != nil {
		return Result{}, fail(err)
	}
	partSize := mu.state.PartSize
	sps := spans(size, partSize)
	res := Result{Parts: len(sps), PartSize: partSize}
	parts := make([]objclient.Part, len(sps))
	err = forEach(ctx, opts.Concurrency, sps, func(ctx context.Context, sp span) error {
		number := sp.Index + 1
		if p, ok := mu.have[number]; ok && p.Size == sp.Len {
			sum, err := md5Hex(f, sp)
			if err != nil {
				return fmt.Errorf("reading part %d: %w", number, err)
			}
			if strings.EqualFold(sum, p.ETag) {
				p.Number = number
				parts[sp.Index] = p
				j.skip(sp.Len)
				return nil
			}
		}
		err := j.move(ctx, func(ctx context.Context, s *stream) error {
			p, err := c.UploadPart(ctx, bucket, key, mu.state.UploadID, number,
				s.reader(io.NewSectionReader(f, sp.Off, sp.Len)), sp.Len)
			if err != nil {
				return err
			}
			p.Number, p.Size = number, sp.Len
			parts[sp.Index] = p
			return nil
		})
		if err != nil {
			return fmt.Errorf("part %d of %d: %w", number, len(sps), err)
		}
		return nil
	})
	if err == nil {
		completeCtx, cancel := context.WithTimeout(ctx, metadataTimeout)
		var pr objclient.PutResult
		pr, err = c.CompleteUpload(completeCtx, bucket, key, mu.state.UploadID, parts)
		cancel()
		res.ETag = pr.ETag
		if err != nil && ctx.Err() == nil {
			err = fmt.Errorf("completing the upload: %w", err)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		hint := "; run the same command again to resume"
		if opts.NoResume {
			hint = "; run it again without --no-resume to resume"
		}
		return res, fmt.Errorf("%w%s", fail(err), hint)
	}
	// A state file left behind is harmless: its upload is gone, so the next run starts over.
	_ = removeState(mu.statePath)
	return res, nil
}

// resumeOrStart finds the upload that an earlier run of the same transfer left, with the
// parts it holds, or starts a new one and records it.
func resumeOrStart(ctx context.Context, c objclient.Client, f *os.File, fi os.FileInfo, bucket, key string, opts UploadOptions) (*multipartUpload, error) {
	ctx, cancel := context.WithTimeout(ctx, metadataTimeout)
	defer cancel()
	// One request first: it fails early and clearly on a missing bucket or a refused key, and
	// it authenticates, after which a Swift client's Endpoint is the storage URL rather than
	// the auth URL, so that the state file's key is the same on every run.
	if err := c.Check(ctx, bucket, false); err != nil {
		return nil, err
	}
	dir := opts.StateDir
	if dir == "" {
		var err error
		if dir, err = DefaultStateDir(); err != nil {
			return nil, err
		}
	}
	abs, err := filepath.Abs(f.Name())
	if err != nil {
		return nil, err
	}
	id := uploadIdentity{Endpoint: c.Endpoint(), Protocol: c.Protocol(), Bucket: bucket, Key: key,
		Source: abs, Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
	mu := &multipartUpload{statePath: filepath.Join(dir, id.fileName())}

	old, err := loadUploadState(mu.statePath, id)
	if err != nil {
		return nil, err
	}
	if old != nil && opts.NoResume {
		// Starting over: the abandoned upload's parts would only take space in the store.
		_ = c.AbortUpload(ctx, bucket, key, old.UploadID)
		old = nil
	}
	if old != nil {
		parts, err := c.ListParts(ctx, bucket, key, old.UploadID)
		switch {
		case objclient.IsNotFound(err):
			// Completed, aborted or expired since: start over.
		case err != nil:
			return nil, fmt.Errorf("resuming upload %s: listing its parts: %w", old.UploadID, err)
		default:
			mu.state = *old
			mu.have = make(map[int]objclient.Part, len(parts))
			for _, p := range parts {
				mu.have[p.Number] = p
			}
			return mu, nil
		}
	}

	partSize, err := partSizeFor(fi.Size(), opts.PartSize, c.Protocol())
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot keep upload state for resuming: %w (set XDG_CACHE_HOME to a writable directory)", err)
	}
	uploadID, err := c.StartUpload(ctx, bucket, key, objclient.PutOptions{ContentType: opts.ContentType, Metadata: opts.Metadata})
	if err != nil {
		return nil, fmt.Errorf("starting the upload: %w", err)
	}
	mu.state = uploadState{Version: stateVersion, uploadIdentity: id, UploadID: uploadID, PartSize: partSize, Started: time.Now().UTC()}
	if err := writeJSON(mu.statePath, mu.state); err != nil {
		_ = c.AbortUpload(ctx, bucket, key, uploadID)
		return nil, fmt.Errorf("cannot keep upload state for resuming: %w (set XDG_CACHE_HOME to a writable directory)", err)
	}
	return mu, nil
}

// md5Hex is the MD5 of a part of f, in hex: what S3 and Swift answer as the ETag of a part.
func md5Hex(f *os.File, sp span) (string, error) {
	h := md5.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, sp.Off, sp.Len)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
