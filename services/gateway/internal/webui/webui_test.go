package webui

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

const indexHTML = `<!doctype html><html><head><script type="module" src="/assets/index-abc123.js"></script></head><body><div id="app"></div></body></html>`

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := io.WriteString(w, s); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func testApp(t *testing.T) http.Handler {
	t.Helper()
	js := "console.log('pulka');"
	return NewHandler(fstest.MapFS{
		"index.html":                {Data: []byte(indexHTML)},
		"assets/index-abc123.js":    {Data: []byte(js)},
		"assets/index-abc123.js.gz": {Data: gz(t, js)},
		"assets/index-def456.css":   {Data: []byte("body{}")},
		"favicon.svg":               {Data: []byte("<svg/>")},
		"README.txt":                {Data: []byte("not for clients")},
	})
}

func get(h http.Handler, method, target string, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestHandler_ClientRoutesGetIndexUncached(t *testing.T) {
	h := testApp(t)
	for _, target := range []string{"/", "/index.html", "/t/abc123", "/t/abc123/", "/lobby", "/t/x?join=1"} {
		t.Run(target, func(t *testing.T) {
			w := get(h, http.MethodGet, target, nil)
			if w.Code != http.StatusOK {
				t.Fatalf("status %d, want 200", w.Code)
			}
			if got := w.Body.String(); got != indexHTML {
				t.Fatalf("body %q, want index.html", got)
			}
			if cc := w.Header().Get("Cache-Control"); cc != "no-cache" {
				t.Errorf("Cache-Control %q, want no-cache", cc)
			}
			if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
				t.Errorf("Content-Type %q, want text/html", ct)
			}
			if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
				t.Errorf("Content-Security-Policy %q", csp)
			}
		})
	}
}

func TestHandler_HashedAssetsCachedForAYear(t *testing.T) {
	w := get(testApp(t), http.MethodGet, "/assets/index-def456.css", nil)
	if w.Code != http.StatusOK || w.Body.String() != "body{}" {
		t.Fatalf("status %d body %q", w.Code, w.Body.String())
	}
	if cc := w.Header().Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
		t.Errorf("Cache-Control %q", cc)
	}
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/css") {
		t.Errorf("Content-Type %q", ct)
	}
}

func TestHandler_MissingAssetIs404NotIndex(t *testing.T) {
	h := testApp(t)
	for _, target := range []string{"/assets/index-old999.js", "/missing.png", "/assets/"} {
		w := get(h, http.MethodGet, target, nil)
		if w.Code != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", target, w.Code)
		}
		if strings.Contains(w.Body.String(), "<div id=\"app\">") {
			t.Errorf("%s: served index.html for a missing file", target)
		}
	}
}

func TestHandler_GzipTwinOnlyWhenAccepted(t *testing.T) {
	h := testApp(t)
	w := get(h, http.MethodGet, "/assets/index-abc123.js", map[string]string{"Accept-Encoding": "br, gzip"})
	if w.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip", w.Header().Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || string(plain) != "console.log('pulka');" {
		t.Fatalf("gunzipped %q, %v", plain, err)
	}
	if ct := w.Header().Get("Content-Type"); !strings.Contains(ct, "javascript") {
		t.Errorf("Content-Type %q: the twin must keep the original's type", ct)
	}
	if w.Header().Get("Vary") != "Accept-Encoding" {
		t.Errorf("Vary %q", w.Header().Get("Vary"))
	}

	for _, ae := range []string{"", "identity", "gzip;q=0"} {
		w := get(h, http.MethodGet, "/assets/index-abc123.js", map[string]string{"Accept-Encoding": ae})
		if w.Header().Get("Content-Encoding") != "" || w.Body.String() != "console.log('pulka');" {
			t.Errorf("Accept-Encoding %q: got encoding %q body %q", ae, w.Header().Get("Content-Encoding"), w.Body.String())
		}
	}
}

func TestHandler_TwinsAndReadmeAreNotServedByName(t *testing.T) {
	h := testApp(t)
	for _, target := range []string{"/assets/index-abc123.js.gz", "/README.txt"} {
		if w := get(h, http.MethodGet, target, nil); w.Code != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", target, w.Code)
		}
	}
}

func TestHandler_OtherFilesRevalidate(t *testing.T) {
	w := get(testApp(t), http.MethodGet, "/favicon.svg", nil)
	if w.Code != http.StatusOK || w.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("status %d Cache-Control %q", w.Code, w.Header().Get("Cache-Control"))
	}
}

func TestHandler_ConditionalGetAnswers304(t *testing.T) {
	h := testApp(t)
	first := get(h, http.MethodGet, "/t/abc", nil)
	etag := first.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag on index.html")
	}
	w := get(h, http.MethodGet, "/t/abc", map[string]string{"If-None-Match": etag})
	if w.Code != http.StatusNotModified {
		t.Fatalf("status %d, want 304", w.Code)
	}
}

func TestHandler_OnlyGetAndHead(t *testing.T) {
	h := testApp(t)
	if w := get(h, http.MethodHead, "/", nil); w.Code != http.StatusOK || w.Body.Len() != 0 {
		t.Errorf("HEAD: status %d, %d body bytes", w.Code, w.Body.Len())
	}
	w := get(h, http.MethodPost, "/", nil)
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: status %d Allow %q", w.Code, w.Header().Get("Allow"))
	}
}

func TestHandler_PathTraversalStaysInside(t *testing.T) {
	h := testApp(t)
	w := get(h, http.MethodGet, "/assets/../../webui.go", nil)
	if w.Code == http.StatusOK && !strings.Contains(w.Body.String(), "<div id=\"app\">") {
		t.Fatalf("served something outside the app: %q", w.Body.String())
	}
}

func TestHandler_NotBuiltSaysRunMakeWeb(t *testing.T) {
	h := NewHandler(fstest.MapFS{"README.txt": {Data: []byte("x")}})
	for _, target := range []string{"/", "/t/abc", "/assets/index-abc123.js"} {
		w := get(h, http.MethodGet, target, nil)
		if w.Code != http.StatusServiceUnavailable {
			t.Errorf("%s: status %d, want 503", target, w.Code)
		}
		if !strings.Contains(w.Body.String(), "make web") {
			t.Errorf("%s: body does not say to run make web: %q", target, w.Body.String())
		}
		if w.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("%s: Cache-Control %q, want no-store", target, w.Header().Get("Cache-Control"))
		}
	}
}

// The embedded build is whatever `make web` last produced (or nothing): the
// handler must serve the one or the other, consistently with Built.
func TestHandler_EmbeddedMatchesBuilt(t *testing.T) {
	w := get(Handler(), http.MethodGet, "/", nil)
	if Built() {
		if w.Code != http.StatusOK {
			t.Fatalf("built, but / answers %d", w.Code)
		}
		// Every asset the built index.html names is served, cached for a year.
		assets := regexp.MustCompile(`/assets/[^"]+`).FindAllString(w.Body.String(), -1)
		if len(assets) == 0 {
			t.Fatal("the built index.html names no assets")
		}
		for _, a := range assets {
			r := get(Handler(), http.MethodGet, a, map[string]string{"Accept-Encoding": "gzip"})
			if r.Code != http.StatusOK || r.Header().Get("Cache-Control") != cacheImmutable {
				t.Errorf("%s: status %d, Cache-Control %q", a, r.Code, r.Header().Get("Cache-Control"))
			}
		}
		return
	}
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "make web") {
		t.Fatalf("not built, but / answers %d %q", w.Code, w.Body.String())
	}
}
