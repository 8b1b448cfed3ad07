package server

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"maps"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/stepbox/stepbox/sandbox"
)

// The playground is a page at / for trying steps by hand: an editor,
// language, input and data fixtures, limits, modules, a network preset
// (sent as the request's egress, which only narrows), and the run's
// events, result or error (its line marked in the editor), and stats. It is static HTML, CSS and JavaScript embedded in the
// binary (no build step, nothing loaded from elsewhere) and it calls the
// same Run RPC over HTTP+JSON as any client, with the API key the user
// types when the server authenticates callers. It runs nothing by itself,
// so it is served whatever Config.Auth says: with "keys", the page is
// useless without a key, and the key stays in the tab's sessionStorage.
//
// Paths: GET / (the page), GET /playground/NAME (its files),
// GET /playground/config.json (what the page needs to know, nothing
// secret: the auth mode, the version, the built-in modules a plan of the
// server allows, and whether fetch is on; never the egress policy's hosts). Every answer carries a strict
// Content-Security-Policy: scripts, styles and connections only from the
// server's own origin, no inline script or style, no framing.

//go:embed playground
var playgroundFS embed.FS

// playgroundCSP is the Content-Security-Policy of every playground answer.
// default-src 'none' is stricter than 'self': each kind of resource the
// page uses is allowed from its own origin, and nothing else at all.
const playgroundCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// playgroundFile is one embedded file, ready to serve.
type playgroundFile struct {
	body        []byte
	contentType string
	etag        string
}

// playgroundTypes are the content types of the embedded files, by
// extension; a file of another kind is not served.
var playgroundTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// loadPlayground reads the embedded files once.
func loadPlayground() (map[string]playgroundFile, error) {
	files := map[string]playgroundFile{}
	err := fs.WalkDir(playgroundFS, "playground", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ct, ok := playgroundTypes[path.Ext(p)]
		if !ok {
			return nil
		}
		b, err := playgroundFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		files[strings.TrimPrefix(p, "playground/")] = playgroundFile{
			body: b, contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`,
		}
		return nil
	})
	return files, err
}

// mountPlayground serves the playground on mux: GET / and GET
// /playground/... (HEAD too); other methods on those paths get 405.
func (s *Server) mountPlayground(mux *http.ServeMux) {
	files, err := loadPlayground()
	if err != nil || files["index.html"].body == nil {
		// Only a broken build could get here: the files are embedded.
		s.log.Error("the playground's embedded files are missing; not serving it")
		return
	}
	cfg, _ := json.Marshal(struct {
		Auth    string   `json:"auth"`
		Version string   `json:"version,omitempty"`
		Modules []string `json:"modules"`
		Fetch   bool     `json:"fetch"`
	}{s.cfg.Auth, s.cfg.Version, s.cfg.offeredModules(), s.cfg.Egress != nil})
	files["config.json"] = playgroundFile{body: cfg, contentType: "application/json"}

	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		serveStatic(w, r, files["index.html"])
	})
	mux.HandleFunc("GET /playground/{name}", func(w http.ResponseWriter, r *http.Request) {
		f, ok := files[r.PathValue("name")]
		if !ok {
			securityHeaders(w.Header())
			http.NotFound(w, r)
			return
		}
		serveStatic(w, r, f)
	})
}

// offeredModules lists the built-in modules that at least one plan of c
// allows, for the playground to offer. Which plan a run gets depends on
// its tenant, which the page does not know: a module the run's plan does
// not allow is refused with VALIDATION naming the plan.
func (c Config) offeredModules() []string {
	plans := slices.Collect(maps.Keys(c.Plans))
	if len(plans) == 0 {
		plans = []string{c.DefaultPlan}
	}
	out := []string{}
	for _, m := range sandbox.BuiltinModules() {
		for _, p := range plans {
			if list, ok := c.PlanModules[p]; !ok || slices.Contains(list, m) {
				out = append(out, m)
				break
			}
		}
	}
	return out
}

// securityHeaders sets the headers every playground answer carries.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", playgroundCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

func serveStatic(w http.ResponseWriter, r *http.Request, f playgroundFile) {
	h := w.Header()
	securityHeaders(h)
	h.Set("Content-Type", f.contentType)
	// Revalidate every time: a new server version must not meet an old
	// script in the cache.
	h.Set("Cache-Control", "no-cache")
	if f.etag != "" {
		h.Set("ETag", f.etag) // ServeContent answers If-None-Match with it
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
}
