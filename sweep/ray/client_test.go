package ray

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestNewAddress(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "http://10.0.0.5:8265", want: "http://10.0.0.5:8265"},
		{in: "http://10.0.0.5:8265/", want: "http://10.0.0.5:8265"},
		{in: "10.0.0.5:8265", want: "http://10.0.0.5:8265"},
		{in: " https://ray.example.com ", want: "https://ray.example.com"},
		{in: "", err: "no cluster address"},
		{in: "ray://10.0.0.5:10001", err: `scheme "ray"`},
		{in: "http://", err: "has no host"},
		{in: "http://h:8265/dashboard", err: "want only scheme, host and port"},
		{in: "http://h:8265/?x=1", err: "want only scheme, host and port"},
		{in: "http://user:pw@h:8265", err: "want only scheme, host and port"},
	} {
		c, err := New(tc.in, Options{})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("New(%q) = %v, want an error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("New(%q): %v", tc.in, err)
			continue
		}
		if got := c.Address(); got != tc.want {
			t.Errorf("New(%q).Address() = %q, want %q", tc.in, got, tc.want)
		}
		c.Close()
	}
}

func TestRayMessage(t *testing.T) {
	// A body as the head sends it when the node's agent failed: the
	// agent's traceback inside the head's.
	nested := `Traceback (most recent call last):
  File "/ray/dashboard/modules/job/job_head.py", line 480, in delete_job
    resp = await job_agent_client.delete_job_internal(job.submission_id)
RuntimeError: Request failed with status code 500: Traceback (most recent call last):
  File "/ray/dashboard/modules/job/job_agent.py", line 129, in delete_job
    deleted = await self.get_job_manager().delete_job(job.submission_id)
RuntimeError: Attempted to delete job 'x', but it is in a non-terminal state RUNNING.
.
`
	for _, tc := range []struct{ body, want string }{
		{"Job x does not exist", "Job x does not exist"},
		{"Traceback (most recent call last):\n  File \"a.py\", line 1\nValueError: Job with submission_id x already exists. Please use a different submission_id.\n",
			"ValueError: Job with submission_id x already exists. Please use a different submission_id."},
		{nested, "RuntimeError: Attempted to delete job 'x', but it is in a non-terminal state RUNNING."},
		{"", "(empty body)"},
		{"  spaced\n\tout  ", "spaced out"},
		{strings.Repeat("é", 400), strings.Repeat("é", 250) + "…"},
		{"bad \xff byte", "bad \uFFFD byte"},
	} {
		if got := rayMessage([]byte(tc.body)); got != tc.want {
			t.Errorf("rayMessage(%.40q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

func TestCheckVersion(t *testing.T) {
	for _, tc := range []struct {
		v      Version
		reason string // empty: accepted
	}{
		{Version{JobAPI: "4", Ray: "2.60.0"}, ""},
		{Version{JobAPI: "4", Ray: "2.61.3"}, ""},
		{Version{JobAPI: "4", Ray: "2.60.0rc1"}, ""},
		{Version{JobAPI: "4", Ray: "2.59.9"}, "needs Ray 2.60.0 or later"},
		{Version{JobAPI: "4", Ray: "2.9.0"}, "needs Ray 2.60.0 or later"},
		{Version{JobAPI: "4", Ray: "3.0.0.dev0"}, "needs Ray 2.x"},
		{Version{JobAPI: "3", Ray: "2.60.0"}, "speaks job API 4"},
		{Version{JobAPI: "5", Ray: "2.70.0"}, "speaks job API 4"},
		{Version{JobAPI: "4", Ray: "two"}, "cannot read the Ray version"},
		{Version{JobAPI: "4", Ray: "2.x.0"}, "cannot read the Ray version"},
	} {
		err := CheckVersion(tc.v)
		if tc.reason == "" {
			if err != nil {
				t.Errorf("CheckVersion(%+v) = %v, want nil", tc.v, err)
			}
			continue
		}
		var ve *VersionError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.reason) || !strings.Contains(err.Error(), tc.v.Ray) {
			t.Errorf("CheckVersion(%+v) = %v, want a VersionError naming %q and the version", tc.v, err, tc.reason)
		}
	}
}

func TestJobRequestPlacement(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    JobRequest
		err  string
	}{
		{"reserves a CPU", JobRequest{Entrypoint: "x", EntrypointNumCPUs: 1}, ""},
		{"reserves a resource", JobRequest{Entrypoint: "x", EntrypointResources: map[string]float64{"node2": 1}}, ""},
		{"on the head on purpose", JobRequest{Entrypoint: "x", OnHead: true}, ""},
		{"on the head by accident", JobRequest{Entrypoint: "x"}, "would run it on the head node"},
		{"contradiction", JobRequest{Entrypoint: "x", OnHead: true, EntrypointNumCPUs: 1}, "OnHead with reserved resources"},
		{"no entrypoint", JobRequest{EntrypointNumCPUs: 1}, "empty entrypoint"},
		{"negative CPUs", JobRequest{Entrypoint: "x", EntrypointNumCPUs: -1}, "entrypoint_num_cpus"},
		{"zero resource", JobRequest{Entrypoint: "x", EntrypointResources: map[string]float64{"node2": 0}}, "positive amount"},
		{"bad id", JobRequest{Entrypoint: "x", EntrypointNumCPUs: 1, SubmissionID: "a/b"}, "submission id"},
		{"longest id", JobRequest{Entrypoint: "x", EntrypointNumCPUs: 1, SubmissionID: strings.Repeat("a", 128)}, ""},
		{"id too long", JobRequest{Entrypoint: "x", EntrypointNumCPUs: 1, SubmissionID: strings.Repeat("a", 129)}, "submission id"},
	} {
		err := tc.r.validate()
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: validate() = %v, want %q", tc.name, err, tc.err)
		}
	}
}

// TestUnreachable: nothing listens at the address.
func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := New(addr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Preflight(context.Background())
	var ue *UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("Preflight at a closed port = %v (%T), want an UnreachableError", err, err)
	}
	for _, want := range []string{"no Ray dashboard answers at http://" + addr, "GET /api/version", "connection refused"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestNotRay: HTTP servers that are not a Ray dashboard with the job API.
func TestNotRay(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    any
		says    string
	}{
		{"a web page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html><body>Welcome to nginx!</body></html>"))
		}, &NoJobAPIError{}, `not the JSON expected`},
		{"no such route", func(w http.ResponseWriter, r *http.Request) {
			http.NotFound(w, r)
		}, &NoJobAPIError{}, "404 Not Found"},
		{"some JSON API", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"status": "ok"}`))
		}, &NoJobAPIError{}, `no "version" and "ray_version"`},
		{"a proxy whose dashboard is down", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "upstream connect error", http.StatusBadGateway)
		}, &UnreachableError{}, "502 Bad Gateway"},
		{"a token is required", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "Unauthorized: missing token", http.StatusUnauthorized)
		}, &AuthError{}, "token authentication"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			c, err := New(srv.URL, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.Preflight(context.Background())
			if err == nil {
				t.Fatal("Preflight: no error")
			}
			var ok bool
			switch tc.want.(type) {
			case *NoJobAPIError:
				var e *NoJobAPIError
				ok = errors.As(err, &e)
			case *UnreachableError:
				var e *UnreachableError
				ok = errors.As(err, &e)
			case *AuthError:
				var e *AuthError
				ok = errors.As(err, &e)
			}
			if !ok || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), srv.URL) {
				t.Errorf("Preflight = %v (%T), want a %T naming %s and saying %q", err, err, tc.want, srv.URL, tc.says)
			}
		})
	}
}

// TestPackageURINames: gcs://NAME.zip with NAME of 1 to 200 letters,
// digits, '_', '-' or '.'.
func TestPackageURINames(t *testing.T) {
	for uri, ok := range map[PackageURI]bool{
		"gcs://_ray_pkg_0a.zip":                                  true,
		PackageURI("gcs://" + strings.Repeat("a", 200) + ".zip"): true,
		PackageURI("gcs://" + strings.Repeat("a", 201) + ".zip"): false,
		"gcs://.zip":      false,
		"gcs://a/b.zip":   false,
		"s3://a.zip":      false,
		"gcs://a.zip.tar": false,
	} {
		if _, _, err := uri.split(); (err == nil) != ok {
			t.Errorf("%s: %v, want ok %v", uri, err, ok)
		}
	}
}
