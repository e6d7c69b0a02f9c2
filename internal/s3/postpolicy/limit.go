package postpolicy

import "io"

// FileReader is a form's file with bounds on its length: a read that would pass max bytes
// fails with ErrEntityTooLarge, and the end of a file shorter than min fails with
// ErrEntityTooSmall instead of io.EOF. Either way the writer reading it sees an error before
// the end and stores nothing.
type FileReader struct {
	r        io.Reader
	min, max int64
	n        int64
	// Err is the bound that stopped the file, if one did.
	Err error
}

// LimitFile bounds r to between min and max bytes, inclusive.
func LimitFile(r io.Reader, min, max int64) *FileReader {
	return &FileReader{r: r, min: min, max: max}
}

// Len is how many bytes have been read.
func (f *FileReader) Len() int64 { return f.n }

func (f *FileReader) Read(b []byte) (int, error) {
	if f.Err != nil {
		return 0, f.Err
	}
	// Read one byte past the bound, so that a file of exactly max bytes ends cleanly and a
	// longer one is caught without waiting for its end.
	if room := f.max - f.n + 1; int64(len(b)) > room {
		b = b[:room]
	}
	n, err := f.r.Read(b)
	f.n += int64(n)
	if f.n > f.max {
		f.Err = refuse(ErrEntityTooLarge, "Your proposed upload exceeds the maximum allowed size (at most %d bytes).", f.max)
		return n - int(f.n-f.max), f.Err
	}
	if err == io.EOF && f.n < f.min {
		f.Err = refuse(ErrEntityTooSmall, "Your proposed upload is smaller than the minimum allowed size (%d bytes, at least %d required).", f.n, f.min)
		return n, f.Err
	}
	return n, err
}
