package objclient

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"
)

func itoa(n int) string { return strconv.Itoa(n) }

// ErrorKind names the class of a failed request for error counting: "403 SignatureDoesNotMatch",
// "503 SlowDown", "404 Not Found", "connection refused", "timeout", ... Low cardinality on
// purpose, so that a million failures make one line of a report, not a million.
func ErrorKind(err error) string {
	var oe *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &oe):
		if oe.Code != "" {
			return itoa(oe.Status) + " " + oe.Code
		}
		if t := http.StatusText(oe.Status); t != "" {
			return itoa(oe.Status) + " " + t
		}
		return itoa(oe.Status)
	case errors.Is(err, ErrShortBody):
		return "short body"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "connection reset"
	default:
		var dns *net.DNSError
		if errors.As(err, &dns) {
			return "dns"
		}
		return "network"
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// maxMessage bounds Error.Message: an error body can be a whole HTML page, and a message is
// meant for one line of a report.
const maxMessage = 200

// textMessage reduces a non-XML error body (Swift answers in text/html or text/plain, and so
// does a load balancer in front of any store) to one line. Swift's bodies are one line of HTML
// ("<html><h1>Not Found</h1><p>The resource could not be found.</p></html>") or several lines of
// plain text ("Errors:\n/seg/1, Etag Mismatch\n..." from a rejected SLO manifest) whose first
// line alone says nothing, so tags are dropped and lines are joined rather than cut at the first.
func textMessage(raw []byte) string {
	s := strings.ToValidUTF8(string(raw), "?")
	if strings.HasPrefix(strings.TrimSpace(s), "<") {
		s = stripTags(s)
	}
	var b strings.Builder
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" {
			continue
		}
		if b.Len() > 0 {
			if strings.HasSuffix(b.String(), ":") {
				b.WriteString(" ")
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(line)
		if b.Len() > maxMessage {
			break
		}
	}
	return truncate(b.String(), maxMessage)
}

// stripTags replaces every <...> with a space, keeping line breaks.
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
			b.WriteByte(' ')
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
