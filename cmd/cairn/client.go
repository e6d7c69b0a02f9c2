package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cairn-store/cairn/internal/objclient"
	"github.com/cairn-store/cairn/internal/transfer"
)

// The command-line object client: put, get, ls, rm, mb and rb, over S3 or Swift.

const clientLong = "\n\nEvery flag can also be set as CAIRN_<FLAG> in the environment (e.g. CAIRN_ACCESS_KEY,\n" +
	"CAIRN_SECRET_KEY), which keeps keys off the command line. See docs/client.md."

// checkTimeout bounds the first request, which tells a wrong endpoint or key.
const checkTimeout = 30 * time.Second

// transferRequestTimeout replaces objclient's two-minute bound on a whole request for put and
// get: a large part over a slow or throttled link may rightly take longer. A request that
// stops moving bytes is still abandoned, by the transfer's stall watchdog.
const transferRequestTimeout = 24 * time.Hour

func newClientCommands() []*cobra.Command {
	return []*cobra.Command{newPutCommand(), newGetCommand(), newLsCommand(), newRmCommand(), newMbCommand(), newRbCommand(), newCpCommand(), newSyncCommand()}
}

// session is one command's connection to a store.
type session struct {
	ctx  context.Context // ends on SIGINT or SIGTERM
	stop context.CancelFunc
	c    objclient.Client
}

// connect builds the client and makes one request, so that a wrong endpoint, a refused key or
// a missing bucket ends here in one line naming the problem. An empty bucket checks the
// credentials only.
func connect(cmd *cobra.Command, conn *connFlags, concurrency int, bucket string) (*session, error) {
	if err := conn.useAWSConfig(cmd); err != nil {
		return nil, err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	c, err := conn.open(ctx, concurrency)
	if err != nil {
		stop()
		return nil, err
	}
	checkCtx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	if err := c.Check(checkCtx, bucket, false); err != nil {
		c.Close()
		stop()
		return nil, plainNetworkError(c, err)
	}
	return &session{ctx: ctx, stop: stop, c: c}, nil
}

func (s *session) close() {
	s.c.Close()
	s.stop()
}

// plainNetworkError shortens the commonest failure, a store that is not there, to what a
// person needs to read: "cannot reach http://127.0.0.1:8787: connection refused".
func plainNetworkError(c objclient.Client, err error) error {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("cannot reach %s: connection refused", c.Endpoint())
	}
	return err
}

// transferFlags tune put and get.
type transferFlags struct {
	partSize    sizeFlag
	concurrency int
	limitRate   sizeFlag
	noResume    bool
	verbose     bool
}

func (f *transferFlags) register(fs *pflag.FlagSet) {
	f.partSize = sizeFlag(transfer.DefaultPartSize)
	fs.Var(&f.partSize, "part-size", "size of the parts or ranges a large file moves in (raised to keep within 10,000 parts; over S3 at least 5MiB)")
	fs.IntVar(&f.concurrency, "concurrency", transfer.DefaultConcurrency, "parts or ranges in flight at once")
	fs.Var(&f.limitRate, "limit-rate", "cap on the bytes per second of all parts together, e.g. 10MiB (default: no limit)")
	fs.BoolVar(&f.noResume, "no-resume", false, "start over, discarding what an interrupted earlier run left")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "print a summary line on stderr when done")
}

func (f *transferFlags) options() (transfer.Options, error) {
	if f.concurrency < 1 {
		return transfer.Options{}, fmt.Errorf("--concurrency %d: want at least 1", f.concurrency)
	}
	if f.partSize < 1 {
		return transfer.Options{}, errors.New("--part-size: want at least one byte")
	}
	return transfer.Options{PartSize: int64(f.partSize), Concurrency: f.concurrency,
		RateLimit: int64(f.limitRate), NoResume: f.noResume}, nil
}

// splitObject splits BUCKET/KEY at the first slash; the key may be empty. It also takes the
// URLs aws cli, s5cmd and rclone users type, s3://BUCKET/KEY and swift://BUCKET/KEY, whose
// scheme is the protocol (an explicit --protocol that says otherwise is an error).
func (f *connFlags) splitObject(cmd *cobra.Command, arg string) (bucket, key string, err error) {
	rest, err := f.useScheme(cmd, arg)
	if err != nil {
		return "", "", err
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("%q: want BUCKET/KEY", arg)
	}
	return bucket, key, nil
}

// useScheme strips an s3:// or swift:// scheme from arg and makes it the protocol.
func (f *connFlags) useScheme(cmd *cobra.Command, arg string) (string, error) {
	for _, scheme := range []string{objclient.ProtocolS3, objclient.ProtocolSwift} {
		rest, ok := strings.CutPrefix(arg, scheme+"://")
		if !ok {
			continue
		}
		if fl := cmd.Flags().Lookup("protocol"); fl != nil && fl.Changed && f.cfg.Protocol != scheme {
			return "", fmt.Errorf("%q is a %s URL, but --protocol (or CAIRN_PROTOCOL) is %s", arg, scheme, f.cfg.Protocol)
		}
		f.cfg.Protocol = scheme
		return rest, nil
	}
	return arg, nil
}

func newPutCommand() *cobra.Command {
	var (
		conn        connFlags
		tf          transferFlags
		contentType string
		meta        []string
	)
	cmd := &cobra.Command{
		Use:   "put LOCAL_FILE BUCKET[/KEY]",
		Short: "Upload a file; large ones go in parallel parts and an interrupted upload resumes",
		Long: "Upload LOCAL_FILE as BUCKET/KEY. KEY defaults to the file's name, also after a\n" +
			"trailing slash (BUCKET/dir/ uploads to dir/NAME). Files of 64 MiB and more go in parts\n" +
			"(S3 multipart upload, Swift static large object), --concurrency at a time; if such an\n" +
			"upload fails or is interrupted, running the same command again sends only the parts\n" +
			"the store does not have yet." + clientLong,
		Args: usageArgs(2, 2, "cairn put LOCAL_FILE BUCKET[/KEY]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			src := args[0]
			bucket, key, err := conn.splitObject(cmd, args[1])
			if err != nil {
				return err
			}
			if key == "" || strings.HasSuffix(key, "/") {
				key += filepath.Base(src)
			}
			opts := transfer.UploadOptions{ContentType: contentType}
			if opts.Options, err = tf.options(); err != nil {
				return err
			}
			if opts.Metadata, err = parseMetadata(meta); err != nil {
				return err
			}
			if opts.ContentType == "" {
				opts.ContentType = mime.TypeByExtension(filepath.Ext(src))
			}
			// A missing file is found before any request is made.
			if fi, err := os.Stat(src); err != nil {
				return err
			} else if !fi.Mode().IsRegular() {
				return fmt.Errorf("%s is not a regular file", src)
			}
			conn.cfg.Timeout = transferRequestTimeout
			s, err := connect(cmd, &conn, tf.concurrency, bucket)
			if err != nil {
				return err
			}
			defer s.close()
			bar := newProgressBar(cmd.ErrOrStderr(), filepath.Base(src))
			opts.Progress = bar.update
			res, err := transfer.Upload(s.ctx, s.c, src, bucket, key, opts)
			bar.clear()
			if err != nil {
				return err
			}
			if tf.verbose {
				fmt.Fprintln(cmd.ErrOrStderr(), summary("uploaded", src, bucket+"/"+key, res))
			}
			return nil
		},
	}
	conn.register(cmd.Flags())
	tf.register(cmd.Flags())
	cmd.Flags().StringVar(&contentType, "content-type", "", "Content-Type of the object (default: guessed from the file name's extension)")
	cmd.Flags().StringArrayVar(&meta, "meta", nil, "user metadata NAME=VALUE (repeatable)")
	return cmd
}

// parseMetadata turns NAME=VALUE pairs into a map; names are lower-cased, as stores keep them.
func parseMetadata(pairs []string) (map[string]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	md := make(map[string]string, len(pairs))
	for _, p := range pairs {
		name, value, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--meta %q: want NAME=VALUE", p)
		}
		md[strings.ToLower(name)] = value
	}
	return md, nil
}

func newGetCommand() *cobra.Command {
	var (
		conn connFlags
		tf   transferFlags
	)
	cmd := &cobra.Command{
		Use:   "get BUCKET/KEY [LOCAL|-]",
		Short: "Download an object; large ones come in parallel ranges and an interrupted download resumes",
		Long: "Download BUCKET/KEY to LOCAL (default: the key's last name in the current directory;\n" +
			"a directory keeps that name inside it), or to standard output with -. The file appears\n" +
			"only when complete: until then bytes go to LOCAL.cairn-partial. Objects of 64 MiB and\n" +
			"more come in ranges, --concurrency at a time; if such a download fails or is\n" +
			"interrupted, running the same command again fetches only the missing ranges, unless\n" +
			"the object has changed since." + clientLong,
		Args: usageArgs(1, 2, "cairn get BUCKET/KEY [LOCAL|-]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			bucket, key, err := conn.splitObject(cmd, args[0])
			if err != nil {
				return err
			}
			if key == "" {
				return fmt.Errorf("%q names a bucket; want BUCKET/KEY", args[0])
			}
			dst := ""
			if len(args) == 2 {
				dst = args[1]
			}
			if dst, err = localPath(key, dst); err != nil {
				return err
			}
			opts := transfer.DownloadOptions{}
			if opts.Options, err = tf.options(); err != nil {
				return err
			}
			conn.cfg.Timeout = transferRequestTimeout
			s, err := connect(cmd, &conn, tf.concurrency, bucket)
			if err != nil {
				return err
			}
			defer s.close()
			bar := newProgressBar(cmd.ErrOrStderr(), path.Base(key))
			opts.Progress = bar.update
			var res transfer.Result
			if dst == "-" {
				res, err = transfer.DownloadTo(s.ctx, s.c, bucket, key, cmd.OutOrStdout(), opts)
			} else {
				res, err = transfer.Download(s.ctx, s.c, bucket, key, dst, opts)
			}
			bar.clear()
			if err != nil {
				return err
			}
			if tf.verbose {
				fmt.Fprintln(cmd.ErrOrStderr(), summary("downloaded", bucket+"/"+key, dst, res))
			}
			return nil
		},
	}
	conn.register(cmd.Flags())
	tf.register(cmd.Flags())
	return cmd
}

// localPath is where get writes key: dst as given, inside dst if it is a directory, or the
// key's last name in the current directory. A name taken from a key can never climb out of
// the directory it is put in: "..", "." and empty names are refused.
func localPath(key, dst string) (string, error) {
	if dst == "-" {
		return dst, nil
	}
	dir := ""
	if dst == "" {
		dir = "."
	} else if fi, err := os.Stat(dst); (err == nil && fi.IsDir()) || strings.HasSuffix(dst, string(os.PathSeparator)) {
		dir = dst
	}
	if dir == "" {
		return dst, nil
	}
	name := path.Base(key)
	if strings.HasSuffix(key, "/") || name == "." || name == ".." || name == "/" || name == "" {
		return "", fmt.Errorf("key %q has no file name to save it under; give LOCAL", key)
	}
	return filepath.Join(dir, name), nil
}

func newLsCommand() *cobra.Command {
	var (
		conn      connFlags
		recursive bool
		jsonOut   bool
	)
	cmd := &cobra.Command{
		Use:   "ls [BUCKET[/PREFIX]]",
		Short: "List buckets, or the objects in a bucket",
		Long: "Without an argument, list the buckets (Swift: containers). With BUCKET[/PREFIX], list the\n" +
			"objects under PREFIX as date, size and key, one level at a time: deeper names show as\n" +
			"PRE dir/, unless --recursive. --json prints one JSON object per line instead." + clientLong,
		Args: usageArgs(0, 1, "cairn ls [BUCKET[/PREFIX]]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			bucket, prefix := "", ""
			if len(args) == 1 {
				rest, err := conn.useScheme(cmd, args[0])
				if err != nil {
					return err
				}
				if rest != "" { // s3:// alone lists the buckets
					if bucket, prefix, err = conn.splitObject(cmd, rest); err != nil {
						return err
					}
				}
			}
			s, err := connect(cmd, &conn, 1, bucket)
			if err != nil {
				return err
			}
			defer s.close()
			out := newListPrinter(cmd.OutOrStdout(), jsonOut)
			if bucket == "" {
				names, err := s.c.ListBuckets(s.ctx)
				if err != nil {
					return fmt.Errorf("listing buckets: %w", err)
				}
				for _, n := range names {
					if err := out.bucket(n); err != nil {
						return err
					}
				}
				return nil
			}
			return transfer.List(s.ctx, s.c, bucket, prefix, recursive, out.entry)
		},
	}
	conn.register(cmd.Flags())
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "list every object under the prefix, not one level")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "one JSON object per line: {\"key\",\"size\",\"last_modified\",\"etag\"}, {\"prefix\"} or {\"bucket\"}")
	return cmd
}

// listPrinter writes ls lines, as text or JSON lines.
type listPrinter struct {
	w    io.Writer
	json *json.Encoder // nil for text
}

func newListPrinter(w io.Writer, asJSON bool) *listPrinter {
	p := &listPrinter{w: w}
	if asJSON {
		p.json = json.NewEncoder(w)
		p.json.SetEscapeHTML(false)
	}
	return p
}

type listLine struct {
	Bucket       string     `json:"bucket,omitempty"`
	Prefix       string     `json:"prefix,omitempty"`
	Key          string     `json:"key,omitempty"`
	Size         *int64     `json:"size,omitempty"`
	LastModified *time.Time `json:"last_modified,omitempty"`
	ETag         string     `json:"etag,omitempty"`
}

func (p *listPrinter) bucket(name string) error {
	if p.json != nil {
		return p.json.Encode(listLine{Bucket: name})
	}
	_, err := fmt.Fprintln(p.w, printable(name))
	return err
}

func (p *listPrinter) entry(e transfer.Entry) error {
	if p.json != nil {
		if e.Prefix != "" {
			return p.json.Encode(listLine{Prefix: e.Prefix})
		}
		o := e.Object
		line := listLine{Key: o.Key, Size: &o.Size, ETag: o.ETag}
		if !o.LastModified.IsZero() {
			t := o.LastModified.UTC()
			line.LastModified = &t
		}
		return p.json.Encode(line)
	}
	var err error
	if e.Prefix != "" {
		_, err = fmt.Fprintf(p.w, "%19s %12s  %s\n", "", "PRE", printable(e.Prefix))
	} else {
		when := ""
		if !e.Object.LastModified.IsZero() {
			when = e.Object.LastModified.Local().Format(time.DateTime)
		}
		_, err = fmt.Fprintf(p.w, "%19s %12d  %s\n", when, e.Object.Size, printable(e.Object.Key))
	}
	return err
}

// printable quotes a name that holds control characters, so that a hostile key cannot move
// the cursor or break a listing into lines that are not there.
func printable(name string) string {
	for _, r := range name {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return strconv.Quote(name)
		}
	}
	return name
}

func newRmCommand() *cobra.Command {
	var (
		conn        connFlags
		recursive   bool
		withBucket  bool
		concurrency int
		verbose     bool
	)
	cmd := &cobra.Command{
		Use:   "rm BUCKET/KEY... [--recursive [--bucket]]",
		Short: "Remove objects; with --recursive everything under a prefix",
		Long: "Remove the objects named. With --recursive, BUCKET/dir removes the object dir (if any) and\n" +
			"everything under dir/, and BUCKET alone everything in the bucket; --bucket then removes\n" +
			"the bucket too. Without --recursive, a missing object is an error." + clientLong,
		Args: usageArgs(1, -1, "cairn rm BUCKET/KEY... [--recursive [--bucket]]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			type target struct{ bucket, key string }
			var targets []target
			for _, a := range args {
				bucket, key, err := conn.splitObject(cmd, a)
				if err != nil {
					return err
				}
				switch {
				case key == "" && !recursive:
					return fmt.Errorf("%q names a bucket: give BUCKET/KEY, or --recursive to remove everything in it", a)
				case withBucket && (!recursive || key != ""):
					return fmt.Errorf("--bucket removes a whole bucket: give BUCKET alone, with --recursive")
				}
				targets = append(targets, target{bucket, key})
			}
			if concurrency < 1 {
				return fmt.Errorf("--concurrency %d: want at least 1", concurrency)
			}
			s, err := connect(cmd, &conn, concurrency, targets[0].bucket)
			if err != nil {
				return err
			}
			defer s.close()
			opts := transfer.RemoveOptions{Recursive: recursive, Concurrency: concurrency}
			for _, t := range targets {
				if verbose {
					opts.Removed = func(key string) { fmt.Fprintf(cmd.OutOrStdout(), "removed %s/%s\n", t.bucket, printable(key)) }
				}
				n, err := transfer.Remove(s.ctx, s.c, t.bucket, t.key, opts)
				if err != nil {
					return plainNetworkError(s.c, err)
				}
				if withBucket {
					if err := removeBucket(s.ctx, s.c, t.bucket, true); err != nil {
						return err
					}
					if err := removeSwiftSegments(s.ctx, s.c, t.bucket, opts); err != nil {
						return err
					}
					if verbose {
						fmt.Fprintf(cmd.OutOrStdout(), "removed bucket %s\n", t.bucket)
					}
				} else if n == 0 {
					return fmt.Errorf("nothing to remove under %s/%s", t.bucket, t.key)
				}
			}
			return nil
		},
	}
	conn.register(cmd.Flags())
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "remove everything under the prefix (or in the bucket)")
	cmd.Flags().BoolVar(&withBucket, "bucket", false, "with --recursive and BUCKET alone: remove the bucket as well")
	cmd.Flags().IntVar(&concurrency, "concurrency", 8, "deletes in flight at once")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print each object removed")
	return cmd
}

// removeBucket deletes an empty bucket, saying why not in a store's two usual answers. After
// emptying the bucket (justEmptied), a 409 is retried for a few seconds: Swift updates a
// container's object count asynchronously, so it may still count objects just deleted.
func removeBucket(ctx context.Context, c objclient.Client, bucket string, justEmptied bool) error {
	wait := 100 * time.Millisecond
	for {
		err := c.DeleteBucket(ctx, bucket)
		var oe *objclient.Error
		switch {
		case err == nil:
			return nil
		case objclient.IsNotFound(err):
			return &transfer.NotFoundError{Bucket: bucket, Err: err}
		case errors.As(err, &oe) && oe.Status == 409:
			if justEmptied && wait < 5*time.Second {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(wait):
				}
				wait *= 2
				continue
			}
			return fmt.Errorf("bucket %s is not empty (cairn rm --recursive --bucket %s removes it with everything in it)", bucket, bucket)
		}
		return fmt.Errorf("removing bucket %s: %w", bucket, plainNetworkError(c, err))
	}
}

// removeSwiftSegments removes, over Swift, the container that held the segments of the
// bucket's large objects (objclient keeps them in BUCKET_segments, as the swift command-line
// client does): deleting a large object's manifest leaves its segments, so a bucket removed
// with everything in it would otherwise leave them all behind.
func removeSwiftSegments(ctx context.Context, c objclient.Client, bucket string, opts transfer.RemoveOptions) error {
	if c.Protocol() != objclient.ProtocolSwift {
		return nil
	}
	segments := bucket + "_segments"
	opts.Removed = nil
	var nf *transfer.NotFoundError
	if _, err := transfer.Remove(ctx, c, segments, "", opts); err != nil {
		if errors.As(err, &nf) {
			return nil // no large object was ever uploaded
		}
		return err
	}
	if err := removeBucket(ctx, c, segments, true); err != nil && !errors.As(err, &nf) {
		return err
	}
	return nil
}

func newMbCommand() *cobra.Command {
	return bucketCommand("mb", "Make a bucket (Swift: container); one that you already own is fine",
		func(s *session, bucket string) error {
			if err := s.c.CreateBucket(s.ctx, bucket); err != nil {
				return fmt.Errorf("making bucket %s: %w", bucket, err)
			}
			return nil
		})
}

func newRbCommand() *cobra.Command {
	return bucketCommand("rb", "Remove an empty bucket (cairn rm --recursive --bucket removes a full one)",
		func(s *session, bucket string) error { return removeBucket(s.ctx, s.c, bucket, false) })
}

// bucketCommand builds a command that acts on one bucket named by its only argument.
func bucketCommand(name, short string, act func(s *session, bucket string) error) *cobra.Command {
	var conn connFlags
	cmd := &cobra.Command{
		Use:   name + " BUCKET",
		Short: short,
		Long:  short + "." + clientLong,
		Args:  usageArgs(1, 1, "cairn "+name+" BUCKET"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			rest, err := conn.useScheme(cmd, args[0])
			if err != nil {
				return err
			}
			bucket := strings.TrimSuffix(rest, "/")
			if bucket == "" || strings.Contains(bucket, "/") {
				return fmt.Errorf("%q: want a bucket name", args[0])
			}
			s, err := connect(cmd, &conn, 1, "")
			if err != nil {
				return err
			}
			defer s.close()
			return act(s, bucket)
		},
	}
	conn.register(cmd.Flags())
	return cmd
}

// usageArgs accepts between lo and hi arguments (hi < 0: no limit), and otherwise prints the
// usage line rather than cobra's "accepts 2 arg(s), received 1".
func usageArgs(lo, hi int, usage string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) < lo || (hi >= 0 && len(args) > hi) {
			return fmt.Errorf("usage: %s", usage)
		}
		return nil
	}
}
