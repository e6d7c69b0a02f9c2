package transfer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/cairn-store/cairn/internal/objclient"
)

// DownloadOptions say how Download moves an object.
type DownloadOptions struct {
	Options
}

// PartialSuffix is appended to the destination while a download is under way; the state of a
// ranged download sits beside it in PartialSuffix+".json".
const PartialSuffix = ".cairn-partial"

// Download fetches bucket/key into the file dst, or to standard output if dst is "-". An
// object smaller than opts.Threshold comes in one GET; a larger one in ranges of opts.PartSize,
// opts.Concurrency at a time, each written in place with WriteAt. Bytes go to
// dst+PartialSuffix, renamed to dst once complete and synced, so that dst is never half an
// object.
//
// A ranged download records the object's ETag and size and the ranges it has completed in
// dst+PartialSuffix+".json". If it fails or is interrupted, both files stay, and the next
// Download to the same dst fetches only the missing ranges, provided that the object still
// has the same ETag and size; a changed object is downloaded afresh.
func Download(ctx context.Context, c objclient.Client, bucket, key, dst string, opts DownloadOptions) (Result, error) {
	if dst == "-" {
		return DownloadTo(ctx, c, bucket, key, os.Stdout, opts)
	}
	start := time.Now()
	res, err := download(ctx, c, bucket, key, dst, opts)
	res.Elapsed = time.Since(start)
	return res, err
}

func download(ctx context.Context, c objclient.Client, bucket, key, dst string, opts DownloadOptions) (Result, error) {
	if err := opts.setDefaults(); err != nil {
		return Result{}, fmt.Errorf("download: %w", err)
	}
	info, err := head(ctx, c, bucket, key)
	if err != nil {
		return Result{}, err
	}
	j := newJob(opts.Options)
	stopProgress := reportProgress(opts.Progress, &j.done, info.Size)
	var res Result
	if info.Size < opts.Threshold {
		res, err = getWhole(ctx, j, c, info, bucket, key, dst)
	} else {
		res, err = getRanges(ctx, j, c, info, bucket, key, dst, opts)
	}
	stopProgress()
	res.Size = info.Size
	res.ETag = info.ETag
	res.Transferred = j.transferred.Load()
	res.Resumed = j.resumed.Load()
	return res, err
}

// DownloadTo writes bucket/key to w in one GET: no parallel ranges, no resume across runs
// (w cannot be rewound). A request that fails part way is continued from where it stopped.
func DownloadTo(ctx context.Context, c objclient.Client, bucket, key string, w io.Writer, opts DownloadOptions) (Result, error) {
	start := time.Now()
	if err := opts.setDefaults(); err != nil {
		return Result{}, fmt.Errorf("download: %w", err)
	}
	info, err := head(ctx, c, bucket, key)
	if err != nil {
		return Result{}, err
	}
	j := newJob(opts.Options)
	stopProgress := reportProgress(opts.Progress, &j.done, info.Size)
	var written int64
	err = j.move(ctx, func(ctx context.Context, s *stream) error {
		get := objclient.GetOptions{W: s.writer(&countingWriter{w: w, n: &written})}
		if written > 0 {
			get.Ranged, get.RangeStart, get.RangeEnd = true, written, -1
		}
		gr, err := c.Get(ctx, bucket, key, get)
		if err != nil {
			// What reached w stays there and will not be fetched again: keep it counted.
			kept := s.moved.Swap(0)
			j.transferred.Add(kept)
			return err
		}
		return sameObject(info, gr)
	})
	stopProgress()
	res := Result{Size: info.Size, ETag: info.ETag, Parts: 1, Transferred: j.transferred.Load(), Elapsed: time.Since(start)}
	if err == nil && written != info.Size {
		err = fmt.Errorf("got %d of %d bytes: %w", written, info.Size, objclient.ErrShortBody)
	}
	if err != nil {
		return res, fmt.Errorf("downloading %s/%s: %w", bucket, key, asInterruption(err))
	}
	return res, nil
}

type countingWriter struct {
	w io.Writer
	n *int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	*c.n += int64(n)
	return n, err
}

// head asks for the object's size and ETag; a 404 is a NotFoundError.
func head(ctx context.Context, c objclient.Client, bucket, key string) (objclient.ObjectInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, metadataTimeout)
	defer cancel()
	info, err := c.Head(ctx, bucket, key)
	if objclient.IsNotFound(err) {
		return info, &NotFoundError{Bucket: bucket, Key: key, Err: err}
	}
	if err != nil {
		return info, fmt.Errorf("downloading %s/%s: %w", bucket, key, asInterruption(err))
	}
	if info.Size < 0 {
		return info, fmt.Errorf("downloading %s/%s: the store did not say how large it is", bucket, key)
	}
	return info, nil
}

// sameObject checks that a GET answered with the object the HEAD described: one replaced in
// between must not be stitched together from two versions.
func sameObject(info objclient.ObjectInfo, gr objclient.GetResult) error {
	if gr.Size != info.Size || (info.ETag != "" && gr.ETag != "" && gr.ETag != info.ETag) {
		return errObjectChanged
	}
	return nil
}

// getWhole fetches a small object in one GET. It does not resume: a retry starts it over.
func getWhole(ctx context.Context, j *job, c objclient.Client, info objclient.ObjectInfo, bucket, key, dst string) (Result, error) {
	partial := dst + PartialSuffix
	fail := func(err error) error {
		return fmt.Errorf("downloading %s/%s to %s: %w", bucket, key, dst, asInterruption(err))
	}
	// A state file of an earlier ranged download of a larger version has nothing to offer.
	if err := removeState(partial + ".json"); err != nil {
		return Result{}, fail(err)
	}
	f, err := os.OpenFile(partial, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return Result{}, fail(err)
	}
	err = j.move(ctx, func(ctx context.Context, s *stream) error {
		if err := f.Truncate(0); err != nil {
			s.setLocalErr(err)
			return err
		}
		gr, err := c.Get(ctx, bucket, key, objclient.GetOptions{W: s.writer(io.NewOffsetWriter(f, 0))})
		if err != nil {
			return err
		}
		if gr.Bytes != info.Size {
			return fmt.Errorf("got %d of %d bytes: %w", gr.Bytes, info.Size, objclient.ErrShortBody)
		}
		return sameObject(info, gr)
	})
	if err == nil {
		err = commit(f, partial, dst)
	}
	if err != nil {
		f.Close()
		os.Remove(partial)
		return Result{Parts: 1}, fail(err)
	}
	return Result{Parts: 1}, nil
}

// getRanges fetches a large object in parallel ranges, resuming an earlier partial download.
func getRanges(ctx context.Context, j *job, c objclient.Client, info objclient.ObjectInfo, bucket, key, dst string, opts DownloadOptions) (Result, error) {
	partial := dst + PartialSuffix
	statePath := partial + ".json"
	fail := func(err error) error {
		return fmt.Errorf("downloading %s/%s to %s: %w", bucket, key, dst, asInterruption(err))
	}
	f, st, err := openPartial(partial, statePath, info, bucket, key, opts)
	if err != nil {
		return Result{}, fail(err)
	}
	done := make(map[[2]int64]bool, len(st.Done))
	for _, r := range st.Done {
		done[r] = true
	}
	sps := spans(info.Size, st.PartSize)
	res := Result{Parts: len(sps), PartSize: st.PartSize}
	var stateMu sync.Mutex // st.Done and its file
	err = forEach(ctx, opts.Concurrency, sps, func(ctx context.Context, sp span) error {
		r := [2]int64{sp.Off, sp.Off + sp.Len - 1}
		if done[r] {
			j.skip(sp.Len)
			return nil
		}
		err := j.move(ctx, func(ctx context.Context, s *stream) error {
			gr, err := c.Get(ctx, bucket, key, objclient.GetOptions{Ranged: true, RangeStart: r[0], RangeEnd: r[1],
				W: s.writer(io.NewOffsetWriter(f, sp.Off))})
			if err != nil {
				return err
			}
			if gr.Bytes != sp.Len {
				return fmt.Errorf("got %d of %d bytes: %w", gr.Bytes, sp.Len, objclient.ErrShortBody)
			}
			return sameObject(info, gr)
		})
		if err != nil {
			return fmt.Errorf("bytes %d-%d: %w", r[0], r[1], err)
		}
		stateMu.Lock()
		defer stateMu.Unlock()
		st.Done = append(st.Done, r)
		slices.SortFunc(st.Done, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
		if err := writeJSON(statePath, st); err != nil {
			return fmt.Errorf("recording the download's progress: %w", err)
		}
		return nil
	})
	if err == nil {
		err = commit(f, partial, dst)
		if err == nil {
			_ = removeState(statePath)
			return res, nil
		}
	}
	f.Close()
	if ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	if errors.Is(err, errObjectChanged) {
		return res, fmt.Errorf("%w; run the same command again to download the new version", fail(err))
	}
	return res, fmt.Errorf("%w; run the same command again to resume", fail(err))
}

// openPartial opens the partial file of an earlier download of the same version of the object
// with its state, or creates both afresh.
func openPartial(partial, statePath string, info objclient.ObjectInfo, bucket, key string, opts DownloadOptions) (*os.File, *downloadState, error) {
	if !opts.NoResume {
		st, err := loadDownloadState(statePath)
		if err != nil {
			return nil, nil, err
		}
		// Without an ETag there is no telling whether the object changed: start over.
		if st != nil && info.ETag != "" && st.ETag == info.ETag && st.Size == info.Size && st.Bucket == bucket && st.Key == key {
			f, err := os.OpenFile(partial, os.O_RDWR, 0)
			if err == nil {
				if fi, err := f.Stat(); err == nil && fi.Size() == info.Size {
					return f, st, nil
				}
				f.Close()
			}
		}
	}
	f, err := os.OpenFile(partial, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return nil, nil, err
	}
	// Full size from the start, so that every range can be written in place.
	if err := f.Truncate(info.Size); err != nil {
		f.Close()
		return nil, nil, err
	}
	st := &downloadState{Version: stateVersion, Bucket: bucket, Key: key, ETag: info.ETag, Size: info.Size,
		PartSize: opts.PartSize, Done: [][2]int64{}}
	if err := writeJSON(statePath, st); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("recording the download's state: %w", err)
	}
	return f, st, nil
}

// commit makes the finished partial file dst: synced first, so that a crash after the rename
// cannot leave dst with holes.
func commit(f *os.File, partial, dst string) error {
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(partial, dst)
}
