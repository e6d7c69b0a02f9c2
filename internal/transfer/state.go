package transfer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// stateVersion is written into every state file; a file of another version is ignored (the
// transfer starts over) rather than misread.
const stateVersion = 1

// DefaultStateDir is where upload state files go: $XDG_CACHE_HOME/cairn/transfers, or
// ~/.cache/cairn/transfers.
func DefaultStateDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no directory for the upload state files: %w", err)
	}
	return filepath.Join(cache, "cairn", "transfers"), nil
}

// uploadIdentity is what makes two runs the same upload: the same file, unchanged, to the
// same object of the same store.
type uploadIdentity struct {
	Endpoint string `json:"endpoint"`
	Protocol string `json:"protocol"`
	Bucket   string `json:"bucket"`
	Key      string `json:"key"`
	Source   string `json:"source"` // absolute path
	Size     int64  `json:"size"`
	ModTime  int64  `json:"mtime_ns"`
}

// fileName is the state file's name: a hash of the identity, so that any key or path maps to
// one safe name.
func (id uploadIdentity) fileName() string {
	h := sha256.New()
	for _, field := range []string{id.Endpoint, id.Protocol, id.Bucket, id.Key, id.Source,
		strconv.FormatInt(id.Size, 10), strconv.FormatInt(id.ModTime, 10)} {
		// Length-prefixed, so that no two different identities hash the same bytes.
		fmt.Fprintf(h, "%d:%s;", len(field), field)
	}
	return hex.EncodeToString(h.Sum(nil)[:16]) + ".json"
}

// uploadState is the state file of a multipart upload in progress.
type uploadState struct {
	Version int `json:"version"`
	uploadIdentity
	UploadID string    `json:"upload_id"`
	PartSize int64     `json:"part_size"`
	Started  time.Time `json:"started"`
}

// loadUploadState reads the state of an interrupted upload of id, or returns nil if there is
// none. A file that cannot be read as the state of exactly this upload counts as none: the
// upload starts over, which is always safe.
func loadUploadState(path string, id uploadIdentity) (*uploadState, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the upload state: %w", err)
	}
	var st uploadState
	if json.Unmarshal(raw, &st) != nil || st.Version != stateVersion || st.uploadIdentity != id ||
		st.UploadID == "" || st.PartSize <= 0 {
		return nil, nil
	}
	return &st, nil
}

// downloadState is the sidecar of a partial download, DST.cairn-partial.json.
type downloadState struct {
	Version  int    `json:"version"`
	Bucket   string `json:"bucket"`
	Key      string `json:"key"`
	ETag     string `json:"etag"`
	Size     int64  `json:"size"`
	PartSize int64  `json:"part_size"`
	// Done lists the completed ranges as [first, last] byte offsets, inclusive like an HTTP
	// Range header; each is one range of PartSize (the last one shorter).
	Done [][2]int64 `json:"done"`
}

func loadDownloadState(path string) (*downloadState, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the download state: %w", err)
	}
	var st downloadState
	if json.Unmarshal(raw, &st) != nil || st.Version != stateVersion || st.PartSize <= 0 {
		return nil, nil
	}
	return &st, nil
}

// writeJSON replaces path with v, by writing a temporary file beside it and renaming it, so
// that an interruption leaves the old state or the new one, never half of one. There is no
// fsync: a state file lost to a crash only costs a transfer that starts over.
func writeJSON(path string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(raw, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// removeState deletes a state file; one already gone is fine.
func removeState(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
