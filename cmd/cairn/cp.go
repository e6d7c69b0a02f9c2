package main

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"mime"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-store/cairn/internal/objclient"
	"github.com/cairn-store/cairn/internal/transfer"
)

// `cairn cp` and `cairn sync`, as `aws s3 cp` and `aws s3 sync` work: one side an s3:// (or
// swift://) URL, the other a local path; a directory goes under a prefix with --recursive, and
// sync copies only what is missing or differs (size, or the source newer), --delete removing
// what the source does not have.

// place is one side of a copy: a local path, or a bucket and key (a prefix for a tree).
type place struct {
	remote      bool
	scheme      string // s3 or swift, for a remote side
	bucket, key string
	local       string
}

func (p place) String() string {
	if p.remote {
		return p.scheme + "://" + p.bucket + "/" + p.key
	}
	return p.local
}

// parsePlace reads a copy's side: an s3:// or swift:// URL is remote, anything else local.
func (f *connFlags) parsePlace(cmd *cobra.Command, arg string) (place, error) {
	if !strings.HasPrefix(arg, objclient.ProtocolS3+"://") && !strings.HasPrefix(arg, objclient.ProtocolSwift+"://") {
		return place{local: arg}, nil
	}
	bucket, key, err := f.splitObject(cmd, arg)
	return place{remote: true, scheme: f.cfg.Protocol, bucket: bucket, key: key}, err
}

// urlScheme is the scheme of an s3:// or swift:// URL.
func urlScheme(arg string) string {
	scheme, _, _ := strings.Cut(arg, "://")
	return scheme
}

// copyItem is one file to move, or one object to copy within the store (copy: from
// srcBucket/srcKey, no bytes through the client).
type copyItem struct {
	local, bucket, key string
	upload             bool
	copy               bool
	srcBucket, srcKey  string
}

// asPrefix makes a key a prefix: a non-empty one ends with "/".
func asPrefix(key string) string {
	if key != "" && !strings.HasSuffix(key, "/") {
		key += "/"
	}
	return key
}

// relativeKey is the local path, under dir, of a key below prefix; an error for a key that
// would climb out of dir or has no file name (a "directory" marker).
func relativeKey(dir, prefix, key string) (string, error) {
	rel := strings.TrimPrefix(key, prefix)
	if rel == "" || strings.HasSuffix(rel, "/") {
		return "", fmt.Errorf("key %q names no file", key)
	}
	for _, part := range strings.Split(rel, "/") {
		if part == "" || part == "." || part == ".." {
			return "", fmt.Errorf("key %q cannot be a path under %s", key, dir)
		}
	}
	return filepath.Join(dir, filepath.FromSlash(rel)), nil
}

// localFiles walks dir's regular files, by path relative to it (slash-separated).
func localFiles(dir string) (map[string]fs.FileInfo, error) {
	out := map[string]fs.FileInfo{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil // directories, links, devices
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = info
		return nil
	})
	return out, err
}

// remoteObjects lists the objects under prefix, by key relative to it.
func remoteObjects(s *session, bucket, prefix string) (map[string]objclient.ObjectInfo, error) {
	out := map[string]objclient.ObjectInfo{}
	err := transfer.List(s.ctx, s.c, bucket, prefix, true, func(e transfer.Entry) error {
		if e.Prefix == "" {
			out[strings.TrimPrefix(e.Object.Key, prefix)] = e.Object
		}
		return nil
	})
	return out, err
}

// copyFlags are cp's and sync's own.
type copyFlags struct {
	conn      connFlags
	tf        transferFlags
	recursive bool
	del       bool
	dryRun    bool
}

func newCpCommand() *cobra.Command {
	var f copyFlags
	cmd := &cobra.Command{
		Use:   "cp SRC DST [--recursive]",
		Short: "Copy a file or a directory to or from a store, as aws s3 cp does (one side s3://BUCKET/KEY)",
		Long: "Copy between a local path and s3://BUCKET/KEY (or swift://CONTAINER/OBJECT). A file goes to KEY\n" +
			"(to KEY/NAME when KEY is empty or ends with /); with --recursive a directory goes under the\n" +
			"prefix KEY/, and the objects under a prefix come down into a directory. Each file moves as\n" +
			"cairn put and cairn get move it (in parts, resumable)." + clientLong,
		Args: usageArgs(2, 2, "cairn cp SRC DST [--recursive]"),
		RunE: func(cmd *cobra.Command, args []string) error { return runCopy(cmd, &f, args, false) },
	}
	f.conn.register(cmd.Flags())
	f.tf.register(cmd.Flags())
	cmd.Flags().BoolVarP(&f.recursive, "recursive", "r", false, "copy a directory, or every object under a prefix")
	cmd.Flags().BoolVar(&f.dryRun, "dryrun", false, "print what would be copied, copy nothing")
	return cmd
}

func newSyncCommand() *cobra.Command {
	var f copyFlags
	cmd := &cobra.Command{
		Use:   "sync SRC DST [--delete]",
		Short: "Make a prefix like a directory, or a directory like a prefix, as aws s3 sync does",
		Long: "Copy from SRC to DST, a local directory and s3://BUCKET/PREFIX either way, the files that DST lacks\n" +
			"or that differ: another size, or a source newer than the destination. --delete removes\n" +
			"from DST what SRC does not have." + clientLong,
		Args: usageArgs(2, 2, "cairn sync SRC DST [--delete]"),
		RunE: func(cmd *cobra.Command, args []string) error { return runCopy(cmd, &f, args, true) },
	}
	f.conn.register(cmd.Flags())
	f.tf.register(cmd.Flags())
	cmd.Flags().BoolVar(&f.del, "delete", false, "remove from the destination what the source does not have")
	cmd.Flags().BoolVar(&f.dryRun, "dryrun", false, "print what would be done, do nothing")
	return cmd
}

func runCopy(cmd *cobra.Command, f *copyFlags, args []string, sync bool) error {
	if err := bindEnv(cmd); err != nil {
		return err
	}
	src, err := f.conn.parsePlace(cmd, args[0])
	if err != nil {
		return err
	}
	dst, err := f.conn.parsePlace(cmd, args[1])
	if err != nil {
		return err
	}
	switch {
	case src.remote && dst.remote && urlScheme(args[0]) != urlScheme(args[1]):
		return errors.New("one side is s3://, the other swift://: a copy within the store speaks one protocol (copy through a local directory)")
	case !src.remote && !dst.remote:
		return errors.New("neither side is in a store: one must be s3://BUCKET/KEY or swift://CONTAINER/OBJECT")
	}
	tree := f.recursive || sync
	if !tree && !src.remote {
		if fi, err := os.Stat(src.local); err != nil {
			return err
		} else if fi.IsDir() {
			return fmt.Errorf("%s is a directory: give --recursive", src.local)
		}
	}
	bucket := dst.bucket
	if src.remote {
		bucket = src.bucket
	}
	if tree && !src.remote {
		if fi, err := os.Stat(src.local); err != nil {
			return err
		} else if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", src.local)
		}
	}
	f.conn.cfg.Timeout = transferRequestTimeout
	s, err := connect(cmd, &f.conn, f.tf.concurrency, bucket)
	if err != nil {
		return err
	}
	defer s.close()
	out := cmd.OutOrStdout()

	var items []copyItem
	var removals []string // local paths, or keys
	switch {
	case src.remote && dst.remote && !tree: // an object copied within the store
		if src.key == "" {
			return fmt.Errorf("%s names a bucket: give a key, or --recursive", args[0])
		}
		key := dst.key
		if key == "" || strings.HasSuffix(key, "/") {
			key += path.Base(src.key)
		}
		items = append(items, copyItem{copy: true, srcBucket: src.bucket, srcKey: src.key, bucket: dst.bucket, key: key})
	case src.remote && dst.remote: // a prefix copied within the store
		from, to := asPrefix(src.key), asPrefix(dst.key)
		objs, err := remoteObjects(s, src.bucket, from)
		if err != nil {
			return err
		}
		var have map[string]objclient.ObjectInfo
		if sync {
			if have, err = remoteObjects(s, dst.bucket, to); err != nil {
				return err
			}
		}
		for _, rel := range slices.Sorted(maps.Keys(objs)) {
			if o, ok := have[rel]; sync && ok && o.Size == objs[rel].Size && !objs[rel].LastModified.After(o.LastModified) {
				continue
			}
			items = append(items, copyItem{copy: true, srcBucket: src.bucket, srcKey: from + rel, bucket: dst.bucket, key: to + rel})
		}
		if f.del {
			removals = absentFrom(have, objs, func(rel string) string { return to + rel })
		}
	case !tree && !src.remote: // a file up
		key := dst.key
		if key == "" || strings.HasSuffix(key, "/") {
			key += filepath.Base(src.local)
		}
		items = append(items, copyItem{local: src.local, bucket: dst.bucket, key: key, upload: true})
	case !tree: // a file down
		if src.key == "" {
			return fmt.Errorf("%s names a bucket: give a key, or --recursive", args[0])
		}
		local, err := localPath(src.key, dst.local)
		if err != nil {
			return err
		}
		items = append(items, copyItem{local: local, bucket: src.bucket, key: src.key})
	case !src.remote: // a directory up
		prefix := asPrefix(dst.key)
		files, err := localFiles(src.local)
		if err != nil {
			return err
		}
		var have map[string]objclient.ObjectInfo
		if sync {
			if have, err = remoteObjects(s, dst.bucket, prefix); err != nil {
				return err
			}
		}
		for _, rel := range slices.Sorted(maps.Keys(files)) {
			fi := files[rel]
			// A listing's times are whole seconds: a file written in the second of its upload
			// is not newer than its object.
			if o, ok := have[rel]; sync && ok && o.Size == fi.Size() && !fi.ModTime().Truncate(time.Second).After(o.LastModified) {
				continue
			}
			items = append(items, copyItem{local: filepath.Join(src.local, filepath.FromSlash(rel)), bucket: dst.bucket, key: prefix + rel, upload: true})
		}
		if f.del {
			removals = absentFrom(have, files, func(rel string) string { return prefix + rel })
		}
	default: // a prefix down
		prefix := asPrefix(src.key)
		objs, err := remoteObjects(s, src.bucket, prefix)
		if err != nil {
			return err
		}
		var have map[string]fs.FileInfo
		if sync {
			if err := os.MkdirAll(dst.local, 0o755); err != nil {
				return err
			}
			if have, err = localFiles(dst.local); err != nil {
				return err
			}
		}
		for _, rel := range slices.Sorted(maps.Keys(objs)) {
			local, err := relativeKey(dst.local, prefix, prefix+rel)
			if err != nil {
				return err // a key that cannot be a file here: nothing is copied
			}
			if fi, ok := have[rel]; sync && ok && fi.Size() == objs[rel].Size && !objs[rel].LastModified.After(fi.ModTime()) {
				continue
			}
			items = append(items, copyItem{local: local, bucket: src.bucket, key: prefix + rel})
		}
		if f.del {
			removals = absentFrom(have, objs, func(rel string) string { return filepath.Join(dst.local, filepath.FromSlash(rel)) })
		}
	}

	opts, err := f.tf.options()
	if err != nil {
		return err
	}
	for _, it := range items {
		remote := place{remote: true, scheme: f.conn.cfg.Protocol, bucket: it.bucket, key: it.key}
		if it.copy {
			from := place{remote: true, scheme: f.conn.cfg.Protocol, bucket: it.srcBucket, key: it.srcKey}
			fmt.Fprintf(out, "%scopy: %s to %s\n", dry(f.dryRun), from, remote)
			if !f.dryRun {
				if _, err := s.c.Copy(s.ctx, it.srcBucket, it.srcKey, it.bucket, it.key); err != nil {
					return err
				}
			}
			continue
		}
		if it.upload {
			fmt.Fprintf(out, "%supload: %s to %s\n", dry(f.dryRun), it.local, remote)
		} else {
			fmt.Fprintf(out, "%sdownload: %s to %s\n", dry(f.dryRun), remote, it.local)
		}
		if f.dryRun {
			continue
		}
		if err := moveOne(cmd, s, it, opts); err != nil {
			return err
		}
	}
	for _, r := range removals {
		if !dst.remote {
			fmt.Fprintf(out, "%sdelete: %s\n", dry(f.dryRun), r)
			if !f.dryRun {
				if err := os.Remove(r); err != nil {
					return err
				}
			}
			continue
		}
		fmt.Fprintf(out, "%sdelete: %s\n", dry(f.dryRun), place{remote: true, scheme: f.conn.cfg.Protocol, bucket: dst.bucket, key: r})
		if !f.dryRun {
			if _, err := transfer.Remove(s.ctx, s.c, dst.bucket, r, transfer.RemoveOptions{}); err != nil {
				return err
			}
		}
	}
	return nil
}

// absentFrom returns, in order, what sync --delete removes: the names of what the destination
// has (have) that the source (src) lacks, each made a path or key by name.
func absentFrom[D, S any](have map[string]D, src map[string]S, name func(rel string) string) []string {
	var out []string
	for _, rel := range slices.Sorted(maps.Keys(have)) {
		if _, ok := src[rel]; !ok {
			out = append(out, name(rel))
		}
	}
	return out
}

func dry(on bool) string {
	if on {
		return "(dryrun) "
	}
	return ""
}

// moveOne moves one file as put and get do.
func moveOne(cmd *cobra.Command, s *session, it copyItem, opts transfer.Options) error {
	if it.upload {
		bar := newProgressBar(cmd.ErrOrStderr(), filepath.Base(it.local))
		uo := transfer.UploadOptions{Options: opts, ContentType: mime.TypeByExtension(filepath.Ext(it.local))}
		uo.Progress = bar.update
		_, err := transfer.Upload(s.ctx, s.c, it.local, it.bucket, it.key, uo)
		bar.clear()
		return err
	}
	if err := os.MkdirAll(filepath.Dir(it.local), 0o755); err != nil {
		return err
	}
	bar := newProgressBar(cmd.ErrOrStderr(), path.Base(it.key))
	do := transfer.DownloadOptions{Options: opts}
	do.Progress = bar.update
	_, err := transfer.Download(s.ctx, s.c, it.bucket, it.key, it.local, do)
	bar.clear()
	return err
}
