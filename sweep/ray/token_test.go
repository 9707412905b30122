package ray

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/websocket"
)

const testSecret = "3f6c1d9e0b7a4c2e8f5d6a1b9c0e7d3a5b2c8e1f4a7d0c3b6e9f2a5d8c1b4e7a"

// TestFindToken: the token is found where Ray's own tools look, in their
// order ($RAY_AUTH_TOKEN, the file $RAY_AUTH_TOKEN_PATH names, then
// ~/.ray/auth_token), trimmed, the first line of a file; a place that is
// named but holds none is an error naming the place and never a token.
func TestFindToken(t *testing.T) {
	home := t.TempDir()
	writeFile(t, DefaultTokenFile(home), "  "+testSecret+"-default\nsecond line\n", 0o600)
	pathFile := filepath.Join(t.TempDir(), "token")
	writeFile(t, pathFile, testSecret+"-path\r\n", 0o600)
	emptyFile := filepath.Join(t.TempDir(), "empty")
	writeFile(t, emptyFile, "\n\n", 0o600)
	ctl := filepath.Join(t.TempDir(), "ctl")
	writeFile(t, ctl, testSecret+"\x01x\n", 0o600)
	noHome := t.TempDir()
	for _, tc := range []struct {
		name  string
		env   map[string]string
		home  string
		token string
		from  TokenSource
		err   string
	}{
		{"env first", map[string]string{TokenEnv: " " + testSecret + "-env\n", TokenPathEnv: pathFile}, home, testSecret + "-env", TokenSource{Kind: TokenFromEnv}, ""},
		{"path next", map[string]string{TokenPathEnv: pathFile}, home, testSecret + "-path", TokenSource{Kind: TokenFromPathEnv, Path: pathFile}, ""},
		{"default last", nil, home, testSecret + "-default", TokenSource{Kind: TokenFromDefault, Path: DefaultTokenFile(home)}, ""},
		{"none", nil, noHome, "", TokenSource{}, ""},
		{"no home", nil, "", "", TokenSource{}, ""},
		{"env blank", map[string]string{TokenEnv: " \t"}, home, "", TokenSource{}, "$RAY_AUTH_TOKEN is set but holds no token"},
		{"path missing", map[string]string{TokenPathEnv: pathFile + ".gone"}, home, "", TokenSource{}, "the file " + pathFile + ".gone (named by $RAY_AUTH_TOKEN_PATH)"},
		{"path empty", map[string]string{TokenPathEnv: emptyFile}, home, "", TokenSource{}, "holds no token on its first line"},
		{"path a folder", map[string]string{TokenPathEnv: home}, home, "", TokenSource{}, "not a regular file"},
		{"control characters", map[string]string{TokenPathEnv: ctl}, home, "", TokenSource{}, "not one a request can carry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := FindToken(func(k string) string { return tc.env[k] }, tc.home)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("FindToken: %v, want an error saying %q", err, tc.err)
				}
				if strings.Contains(err.Error(), testSecret) {
					t.Fatalf("the error carries the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tok.secret != tc.token || tok.Source != tc.from {
				t.Fatalf("FindToken: %q from %v, want %q from %v", tok.secret, tok.Source, tc.token, tc.from)
			}
		})
	}
}

// TestTokenNeverPrinted: a Token, and what holds one, print its source,
// never the token, with any verb.
func TestTokenNeverPrinted(t *testing.T) {
	tok, err := NewToken(testSecret, TokenSource{Kind: TokenFromEnv})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New("http://127.0.0.1:1", Options{Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	opts := Options{Token: tok}
	numeric := []string{"%d", "%+d", "%08b"}[:3]
	for _, s := range []string{
		fmt.Sprint(tok), fmt.Sprintf("%v %+v %#v %s %q %x", tok, tok, tok, tok, tok, tok),
		fmt.Sprintf("%v %+v %#v", opts, opts, opts), fmt.Sprintf("%v %+v %#v", c, c, *c),
		// Verbs that are not for strings print a struct's fields raw
		// (the format is a variable: vet would refuse them).
		fmt.Sprintf(strings.Join(numeric, " "), tok, opts, *c),
	} {
		if strings.Contains(s, testSecret) || strings.Contains(s, fmt.Sprintf("%x", testSecret)) {
			t.Errorf("printed: %s", s)
		}
	}
	if got := fmt.Sprint(tok); got != "token from $RAY_AUTH_TOKEN" {
		t.Errorf("a token prints %q", got)
	}
}

// TestTokenSentEverywhere: every request carries the token, the log
// stream's WebSocket included; a refusal names the token's source and
// not the token, even when the server echoes it.
func TestTokenSentEverywhere(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{} // path -> Authorization
	record := func(r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		seen[r.URL.Path] = r.Header.Get("Authorization")
		return r.Header.Get("Authorization") == "Bearer "+testSecret
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/version", func(w http.ResponseWriter, r *http.Request) {
		if !record(r) {
			http.Error(w, "Forbidden: Invalid authentication token, got "+r.Header.Get("Authorization"), http.StatusForbidden)
			return
		}
		w.Write([]byte(`{"version":"4","ray_version":"2.60.0","session_name":"s"}`))
	})
	mux.HandleFunc("/api/packages/gcs/", func(w http.ResponseWriter, r *http.Request) {
		record(r)
		if r.Method == http.MethodGet {
			http.NotFound(w, r)
		}
	})
	mux.HandleFunc("/api/jobs/", func(w http.ResponseWriter, r *http.Request) {
		record(r)
		w.Write([]byte(`{"submission_id":"x","job_id":"x"}`))
	})
	mux.Handle("/api/jobs/x/logs/tail", websocket.Handler(func(ws *websocket.Conn) {
		record(ws.Request())
		websocket.Message.Send(ws, "line\n")
	}))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	tok, err := NewToken(testSecret, TokenSource{Kind: TokenFromPathEnv, Path: "/run/secrets/ray"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(srv.URL, Options{Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Preflight(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PackageExists(ctx, "gcs://_ray_pkg_a.zip"); err != nil {
		t.Fatal(err)
	}
	if err := c.UploadPackage(ctx, "gcs://_ray_pkg_a.zip", strings.NewReader("zip"), 3); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Submit(ctx, JobRequest{Entrypoint: "true", OnHead: true}); err != nil {
		t.Fatal(err)
	}
	var cur LogCursor
	if err := c.TailLogs(ctx, "x", &cur, func(string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/api/version", "/api/packages/gcs/_ray_pkg_a.zip", "/api/jobs/", "/api/jobs/x/logs/tail"} {
		if seen[p] != "Bearer "+testSecret {
			t.Errorf("%s: Authorization %q, want the token", p, seen[p])
		}
	}

	wrong, _ := NewToken(testSecret[:40], TokenSource{Kind: TokenFromPathEnv, Path: "/run/secrets/ray"})
	c2, err := New(srv.URL, Options{Token: wrong})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	_, err = c2.Preflight(ctx)
	var ae *AuthError
	if !errors.As(err, &ae) || ae.Status != http.StatusForbidden ||
		!strings.Contains(err.Error(), "refused the token from the file /run/secrets/ray (named by $RAY_AUTH_TOKEN_PATH)") {
		t.Fatalf("Preflight with another token: %v", err)
	}
	if strings.Contains(err.Error(), testSecret[:40]) {
		t.Fatalf("the error carries the token: %v", err)
	}
}

// TestNoToken: a cluster that wants a token, asked without one: the
// message says so and where stratbench looked.
func TestNoToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Unauthorized: Missing authentication token", http.StatusUnauthorized)
	}))
	defer srv.Close()
	c, err := New(srv.URL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Preflight(context.Background())
	for _, want := range []string{"uses token authentication and stratbench found no token", "$RAY_AUTH_TOKEN", "$RAY_AUTH_TOKEN_PATH", "~/.ray/auth_token"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Preflight: %v, want it to say %q", err, want)
		}
	}
}
