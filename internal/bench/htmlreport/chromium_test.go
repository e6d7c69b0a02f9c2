package htmlreport

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The unit tests check the markup; this one checks that a real browser draws it. A page can be
// well-formed and still show nothing (an SVG attribute the browser ignores, a CSS rule hiding
// the charts, a path outside the canvas), and only pixels tell.

// findChromium returns the browser to use, or skips (fails when CAIRN_REQUIRE_CHROMIUM=1, as
// the project's test script sets, so that a missing browser cannot pass as a skipped test).
func findChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CAIRN_CHROMIUM"); p != "" {
		path, err := exec.LookPath(p)
		if err != nil {
			t.Fatalf("CAIRN_CHROMIUM=%s: %v", p, err)
		}
		return path
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	const msg = "no Chromium (chromium, chromium-browser or google-chrome on PATH, or CAIRN_CHROMIUM): " +
		"scripts/install-test-deps.sh installs it"
	if os.Getenv("CAIRN_REQUIRE_CHROMIUM") == "1" {
		t.Fatal(msg + "; CAIRN_REQUIRE_CHROMIUM=1 makes this a failure")
	}
	t.Skip(msg)
	return ""
}

// headless runs the browser on url with extra arguments and returns its standard output.
func headless(t *testing.T, bin, url string, extra ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
		// One CSS pixel per device pixel, and no colour management: the stroke colours must
		// reach the PNG exactly as the page names them.
		"--force-device-scale-factor=1", "--force-color-profile=srgb",
		// Its own profile, so that parallel runs (go test -count, other packages) never share one.
		"--user-data-dir=" + t.TempDir(),
	}, extra...)
	cmd := exec.CommandContext(ctx, bin, append(args, url)...)
	// The browser forks renderer and utility processes: give them a process group of their own
	// so that a timeout, and the cleanup afterwards, ends all of them and nothing else.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // stragglers of our group, if any
	}
	t.Logf("%s %s: %v", filepath.Base(bin), strings.Join(extra, " "), time.Since(start).Round(time.Millisecond))
	if err != nil {
		tail := stderr.String()
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		t.Fatalf("%s: %v (timeout %v)\n%s", bin, err, ctx.Err(), tail)
	}
	return stdout.Bytes()
}

func TestChromiumRendersCharts(t *testing.T) {
	bin := findChromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := WriteFile(page, workloadReport()); err != nil {
		t.Fatal(err)
	}
	url := "file://" + page

	t.Run("screenshot", func(t *testing.T) {
		t.Parallel()
		checkScreenshot(t, screenshot(t, bin, url, "1280,4000"))
	})
	t.Run("dom", func(t *testing.T) {
		t.Parallel()
		dom := string(headless(t, bin, url, "--dump-dom"))
		// What the browser built from the page: every chart is an SVG element, the hostile stage
		// name stayed text (serialized escaped), and no script element appeared.
		if n := strings.Count(dom, "<svg"); n != workloadCharts {
			t.Errorf("browser DOM has %d <svg> elements, want %d", n, workloadCharts)
		}
		if !strings.Contains(dom, "&lt;script&gt;alert(") || strings.Contains(dom, "<script") {
			t.Error("the stage name's <script> is not text in the browser's DOM")
		}
		if n := len(regexp.MustCompile(`<circle[^>]*fill="`+colKnee+`"`).FindAllString(dom, -1)); n != 1 {
			t.Errorf("browser DOM has %d knee markers, want 1", n)
		}
	})
}

type rgb struct{ r, g, b uint8 }

func hexColor(s string) rgb {
	v, _ := strconv.ParseUint(strings.TrimPrefix(s, "#"), 16, 32)
	return rgb{uint8(v >> 16), uint8(v >> 8), uint8(v)}
}

// pixels is a screenshot as a plain grid: image.Image.At through an interface for each of
// five million pixels takes seconds.
type pixels struct {
	w, h int
	p    []rgb
}

func toPixels(img image.Image) pixels {
	b := img.Bounds()
	px := pixels{w: b.Dx(), h: b.Dy(), p: make([]rgb, 0, b.Dx()*b.Dy())}
	if n, ok := img.(*image.NRGBA); ok && n.Rect.Min == (image.Point{}) && n.Stride == 4*px.w {
		// Screenshots are opaque: NRGBA values are the colours themselves.
		for i := 0; i+3 < len(n.Pix); i += 4 {
			px.p = append(px.p, rgb{n.Pix[i], n.Pix[i+1], n.Pix[i+2]})
		}
		return px
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			px.p = append(px.p, rgb{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8)})
		}
	}
	return px
}

func (px pixels) at(x, y int) rgb { return px.p[y*px.w+x] }

// checkScreenshot looks for the charts in the pixels: the throughput lines in their exact
// colour, in quantity and spread over the page (not just legend swatches), the knee marker as a
// solid disc, and a page that is not blank.
func checkScreenshot(t *testing.T, img image.Image) {
	px := toPixels(img)
	if px.w != 1280 || px.h != 4000 {
		t.Errorf("screenshot is %dx%d, want 1280x4000", px.w, px.h)
	}
	total, knee, white := hexColor(colTotal), hexColor(colKnee), rgb{255, 255, 255}
	var nTotal, nKnee, nInk int
	colours := map[rgb]bool{}
	minX, maxX, minY, maxY := px.w, 0, px.h, 0
	for y := 0; y < px.h; y++ {
		for x := 0; x < px.w; x++ {
			c := px.at(x, y)
			colours[c] = true
			if c != white {
				nInk++
			}
			switch c {
			case total:
				nTotal++
				minX, maxX, minY, maxY = min(minX, x), max(maxX, x), min(minY, y), max(maxY, y)
			case knee:
				nKnee++
			}
		}
	}
	t.Logf("pixels: %d throughput-line (x %d..%d, y %d..%d), %d knee, %d non-white, %d colours",
		nTotal, minX, maxX, minY, maxY, nKnee, nInk, len(colours))
	// Three charts draw colTotal 3 px wide across ~530 px: thousands of pixels. All legend
	// swatches together are 3 × 64.
	if nTotal < 1500 {
		t.Errorf("only %d pixels of the throughput line colour %s: lines not drawn", nTotal, colTotal)
	}
	if maxX-minX < 400 || maxY-minY < 1000 {
		t.Errorf("throughput colour spans only %dx%d px: want lines across charts, on charts far apart",
			maxX-minX, maxY-minY)
	}
	if nKnee < 60 || !px.hasSolidBlock(knee, 5) {
		t.Errorf("knee marker (%s) not drawn: %d pixels, no solid 5x5 disc", colKnee, nKnee)
	}
	if area := px.w * px.h; nInk < area/50 || len(colours) < 50 {
		t.Errorf("page looks blank: %d non-white pixels of %d, %d colours", nInk, area, len(colours))
	}
}

// hasSolidBlock reports whether some n×n square is entirely colour c (the inside of a filled
// circle, which anti-aliased text or a thin line never has).
func (px pixels) hasSolidBlock(c rgb, n int) bool {
	for y := 0; y+n <= px.h; y++ {
		for x := 0; x+n <= px.w; x++ {
			if px.at(x, y) != c {
				continue
			}
			solid := true
			for dy := 0; dy < n && solid; dy++ {
				for dx := 0; dx < n && solid; dx++ {
					solid = px.at(x+dx, y+dy) == c
				}
			}
			if solid {
				return true
			}
		}
	}
	return false
}

// screenshot renders url in headless Chromium at a window size ("W,H") and decodes the PNG.
func screenshot(t *testing.T, bin, url, size string) image.Image {
	t.Helper()
	shot := filepath.Join(t.TempDir(), "out.png")
	headless(t, bin, url, "--screenshot="+shot, "--window-size="+size)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	return img
}
