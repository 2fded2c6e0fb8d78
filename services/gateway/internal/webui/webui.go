package webui

import (
	"embed"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

//go:embed all:dist
var dist embed.FS

// Cache policies: hashed assets never change under their name; everything
// else must be revalidated so that a deploy is seen at once.
const (
	cacheImmutable  = "public, max-age=31536000, immutable"
	cacheRevalidate = "no-cache"
	cacheNever      = "no-store"
)

// contentSecurityPolicy allows the app's own scripts and styles, inline
// style attributes (the components set a few), and WebSockets to the same
// host; nothing is loaded from anywhere else.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; " +
	"frame-ancestors 'none'; form-action 'self'"

// Handler serves the embedded client, or the "run make web" page when it
// was not built.
func Handler() http.Handler {
	app, err := fs.Sub(dist, "dist/app")
	if err != nil {
		return notBuilt{}
	}
	return NewHandler(app)
}

// NewHandler serves the single-page app in fsys (index.html at its root,
// hashed files under assets/). Without an index.html it serves the page
// saying the client must be built.
func NewHandler(fsys fs.FS) http.Handler {
	if _, err := fs.Stat(fsys, "index.html"); err != nil {
		return notBuilt{}
	}
	return &spa{fsys: fsys}
}

type spa struct {
	fsys fs.FS
}

func (h *spa) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	switch {
	case name == "" || name == "index.html":
		h.serveIndex(w, r)
	case name == "assets" || strings.HasPrefix(name, "assets/"):
		// A hashed asset that is not there is a stale page asking for an old
		// build: a 404, never index.html under a script's name.
		h.serveFile(w, r, name, cacheImmutable)
	case path.Ext(name) != "":
		h.serveFile(w, r, name, cacheRevalidate)
	default:
		// A client route (/t/<id>, /lobby): the app decides what it shows.
		h.serveIndex(w, r)
	}
}

func (h *spa) serveIndex(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "same-origin")
	h.serveFile(w, r, "index.html", cacheRevalidate)
}

// serveFile sends name from the app, its gzip twin when the client takes it.
func (h *spa) serveFile(w http.ResponseWriter, r *http.Request, name, cache string) {
	if name == "README.txt" || strings.HasSuffix(name, ".gz") {
		http.NotFound(w, r)
		return
	}
	info, err := fs.Stat(h.fsys, name)
	if err != nil || info.IsDir() {
		http.NotFound(w, r)
		return
	}
	hd := w.Header()
	hd.Set("Cache-Control", cache)
	hd.Set("X-Content-Type-Options", "nosniff")
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	hd.Set("Content-Type", ctype)

	send := name
	if _, err := fs.Stat(h.fsys, name+".gz"); err == nil {
		hd.Add("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			send = name + ".gz"
			hd.Set("Content-Encoding", "gzip")
		}
	}
	f, err := h.fsys.Open(send)
	if err != nil {
		http.Error(w, "cannot read "+name, http.StatusInternalServerError)
		return
	}
	defer func() { _ = f.Close() }()
	rs, ok := f.(io.ReadSeeker)
	if !ok {
		http.Error(w, "cannot read "+name, http.StatusInternalServerError)
		return
	}
	// An embedded file has no modification time; the ETag is its size and
	// name, which change with every build of a hashed asset or index.html.
	if st, err := f.Stat(); err == nil {
		hd.Set("ETag", strconv.Quote(strconv.FormatInt(st.Size(), 36)+"-"+etagName(send)))
	}
	http.ServeContent(w, r, name, time.Time{}, rs)
}

// etagName keeps the part of a file name that changes with its content.
func etagName(name string) string {
	return strings.NewReplacer("/", "-", ".", "-").Replace(name)
}

// acceptsGzip reports whether the request takes gzip (and does not refuse it
// with q=0).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(enc), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// notBuilt answers every request while the client is missing.
type notBuilt struct{}

const notBuiltPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Pulka</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><h1>Pulka</h1>
<p>The web client has not been built. Run <code>make web</code> at the repository root,
then rebuild and restart the gateway.</p></body></html>
`

func (notBuilt) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", cacheNever)
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusServiceUnavailable)
	if r.Method != http.MethodHead {
		_, _ = io.WriteString(w, notBuiltPage)
	}
}

// Built reports whether the client was built into this binary, so the
// gateway can warn at start-up instead of leaving players a bare page.
func Built() bool {
	_, err := fs.Stat(dist, "dist/app/index.html")
	return err == nil
}
