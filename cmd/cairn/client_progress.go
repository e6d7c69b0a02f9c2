package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/cairn-store/cairn/internal/transfer"
)

// progressBar draws `name  [=====>    ]  45%  12.3 MiB/s  ETA 3s` on one terminal line. The
// transfer calls update at most ten times a second from one goroutine at a time, so the bar
// needs neither a lock nor a rate limit of its own. A nil *progressBar draws nothing: that is
// what a command gets when stderr is not a terminal (a pipe, a log file, CI).
type progressBar struct {
	w       io.Writer
	name    string
	columns int
	now     func() time.Time
	window  []progressSample // the last few seconds, for the speed
	drawn   bool
}

type progressSample struct {
	at   time.Time
	done int64
}

// speedWindow is how far back the speed looks: long enough to smooth out parts finishing
// together, short enough to follow a change of pace (and to forget resumed parts, which count
// as done the moment they are verified).
const speedWindow = 3 * time.Second

// newProgressBar returns a bar for w if w is a terminal, and nil otherwise.
func newProgressBar(w io.Writer, name string) *progressBar {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	columns, _, err := term.GetSize(int(f.Fd()))
	if err != nil || columns <= 0 {
		columns = 80
	}
	return &progressBar{w: w, name: name, columns: columns, now: time.Now}
}

// update redraws the bar; its signature is transfer.ProgressFunc.
func (b *progressBar) update(done, total int64) {
	if b == nil {
		return
	}
	fmt.Fprint(b.w, "\r"+b.line(done, total, b.now())+"\x1b[K")
	b.drawn = true
}

// clear erases the bar, so that what follows (an error, the prompt) starts on a clean line.
func (b *progressBar) clear() {
	if b == nil || !b.drawn {
		return
	}
	fmt.Fprint(b.w, "\r\x1b[K")
	b.drawn = false
}

// line renders the bar for done of total bytes at now, fitted to the terminal's width.
func (b *progressBar) line(done, total int64, now time.Time) string {
	b.window = append(b.window, progressSample{now, done})
	for len(b.window) > 2 && now.Sub(b.window[0].at) > speedWindow {
		b.window = b.window[1:]
	}
	var speed float64 // bytes per second
	if first := b.window[0]; now.Sub(first.at) > 0 && done > first.done {
		speed = float64(done-first.done) / now.Sub(first.at).Seconds()
	}
	fraction := 1.0
	if total > 0 {
		fraction = min(max(float64(done)/float64(total), 0), 1)
	}
	eta := "ETA --"
	switch {
	case done >= total:
		eta = "done"
	case speed > 0:
		eta = "ETA " + formatETA(time.Duration(float64(total-done)/speed*float64(time.Second)))
	}
	tail := fmt.Sprintf("  %3.0f%%  %s/s  %s", fraction*100, formatBytes(speed), eta)

	// The name gets what is left after the bar's minimum width and the numbers.
	const minBar, maxBar = 10, 40
	name := b.name
	room := b.columns - 1 - len(tail) - (minBar + 2) - 2
	if room < 1 {
		name = ""
	} else if utf8.RuneCountInString(name) > room {
		r := []rune(name)
		name = string(r[:max(room-1, 0)]) + "…"
	}
	width := min(maxBar, b.columns-1-len(tail)-utf8.RuneCountInString(name)-2-2)
	if width < minBar {
		width = minBar
	}
	filled := int(fraction * float64(width))
	bar := strings.Repeat("=", filled)
	if filled < width {
		bar += ">" + strings.Repeat(" ", width-filled-1)
	}
	return name + "  [" + bar + "]" + tail
}

// formatBytes writes a byte count (or a rate, before "/s") like 12.3 MiB.
func formatBytes(bps float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for bps >= 1024 && i < len(units)-1 {
		bps /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f %s", bps, units[i])
	}
	return fmt.Sprintf("%.1f %s", bps, units[i])
}

func formatETA(d time.Duration) string {
	s := int64(d.Round(time.Second).Seconds())
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	default:
		return fmt.Sprintf("%dh%02dm", s/3600, s/60%60)
	}
}

// summary is the --verbose line after a transfer: what moved where, how fast, in how many
// parts, and how much an earlier run had already done.
func summary(verb, from, to string, r transfer.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s to %s: %s in %v", verb, from, to, formatBytes(float64(r.Size)), r.Elapsed.Round(time.Millisecond))
	if s := r.Elapsed.Seconds(); s > 0 {
		fmt.Fprintf(&b, " (%s/s)", formatBytes(float64(r.Transferred)/s))
	}
	if r.PartSize > 0 {
		fmt.Fprintf(&b, ", %d parts of %s", r.Parts, formatBytes(float64(r.PartSize)))
	}
	if r.Resumed > 0 {
		fmt.Fprintf(&b, ", %s already there from an interrupted run", formatBytes(float64(r.Resumed)))
	}
	return b.String()
}
