package ray

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Options configure a Client. Every field has a usable zero value.
type Options struct {
	// Token, when not empty, is sent as "Authorization: Bearer TOKEN" with
	// every request (the log stream's included), for clusters that use
	// Ray's token authentication (RAY_AUTH_MODE=token; see FindToken).
	// Messages name its source, never the token.
	Token Token

	// HTTPClient sends every request. Nil means a client of this package:
	// DialTimeout to connect, ResponseHeaderTimeout for an answer to start,
	// and no overall timeout (log streams and uploads last as long as their
	// context allows).
	HTTPClient *http.Client
}

// Timeouts of the default HTTP client. A dashboard that accepts a
// connection but does not start answering within ResponseHeaderTimeout
// (counted from the end of the request's body) is treated as unreachable.
// The slowest answers measured are POST /api/jobs/, which waits up to 10 s
// for the head's job agent, and a package PUT, which Ray stores in the GCS
// before answering.
const (
	DialTimeout           = 10 * time.Second
	ResponseHeaderTimeout = 60 * time.Second
)

// Bounds on what the client reads from Ray. A response beyond them is a
// ProtocolError, never an unbounded allocation.
const (
	maxErrorBody    = 64 << 10  // an error body (a traceback)
	maxSmallJSON    = 16 << 20  // version, job details, the job list
	maxLogsResponse = 512 << 20 // GET /api/jobs/{id}/logs returns the whole log
)

// Client talks to the Ray Jobs REST API of one cluster: the HTTP server of
// the dashboard on the head node (port 8265 by default). It is safe for
// concurrent use. Every method takes a context; an error names the endpoint
// and carries Ray's message.
type Client struct {
	base  *url.URL // scheme and host, no path
	token *Token   // a pointer: printing a Client prints no token
	http  *http.Client
	owned bool // http is ours: Close releases its idle connections
}

// New returns a client for the dashboard at address: "http://HOST:PORT",
// "https://HOST:PORT" or "HOST:PORT" (http is then assumed). It does not
// connect; Preflight does.
func New(address string, opts Options) (*Client, error) {
	base, err := parseAddress(address)
	if err != nil {
		return nil, err
	}
	tok := opts.Token
	c := &Client{base: base, token: &tok, http: opts.HTTPClient}
	if c.http == nil {
		c.http = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: DialTimeout}).DialContext,
			ResponseHeaderTimeout: ResponseHeaderTimeout,
			MaxIdleConnsPerHost:   4,
			// Below the dashboard's keep-alive (aiohttp closes an idle
			// connection after 75 s), so a request seldom meets a
			// connection the server is closing.
			IdleConnTimeout: 30 * time.Second,
		}}
		c.owned = true
	}
	return c, nil
}

func parseAddress(address string) (*url.URL, error) {
	a := strings.TrimSpace(address)
	if a == "" {
		return nil, errors.New("ray: no cluster address (want http://HOST:PORT, the head node's dashboard)")
	}
	if !strings.Contains(a, "://") {
		a = "http://" + a
	}
	u, err := url.Parse(a)
	if err != nil {
		return nil, fmt.Errorf("ray: cluster address %q: %w", address, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("ray: cluster address %q: scheme %q: want http or https (the dashboard's address, not ray:// or the GCS port)", address, u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("ray: cluster address %q has no host", address)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.Trim(u.Path, "/") != "" {
		return nil, fmt.Errorf("ray: cluster address %q: want only scheme, host and port (e.g. http://10.0.0.5:8265)", address)
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}, nil
}

// Address is the dashboard's address as the client uses it.
func (c *Client) Address() string { return c.base.String() }

// Close releases the idle connections of the client's own HTTP client.
func (c *Client) Close() {
	if c.owned {
		c.http.CloseIdleConnections()
	}
}

// Preflight checks, before anything is uploaded or submitted, that the
// address is a Ray dashboard with the job API and that its versions are ones
// this client can use (CheckVersion). Its error is an *UnreachableError, a
// *NoJobAPIError, an *AuthError or a *VersionError, or the context's.
func (c *Client) Preflight(ctx context.Context) (Version, error) {
	v, err := c.Version(ctx)
	if err != nil {
		return v, err
	}
	if err := CheckVersion(v); err != nil {
		var ve *VersionError
		if errors.As(err, &ve) {
			ve.Address = c.Address()
		}
		return v, err
	}
	return v, nil
}

// request is one call: an endpoint as Ray documents it and the path sent.
type request struct {
	method   string
	path     string // escaped path, e.g. /api/jobs/abc/logs
	body     io.Reader
	length   int64 // of body; -1 when unknown
	ctype    string
	endpoint string // for messages: method and path
}

func newRequest(method, path string) request {
	return request{method: method, path: path, length: -1, endpoint: method + " " + path}
}

// do sends r. A transport failure is an *UnreachableError (or the context's
// error when the context ended); an answer, whatever its status, is
// returned with its body open.
func (c *Client) do(ctx context.Context, r request) (*http.Response, error) {
	// r.path is escaped by the caller, and kept as is: a trailing slash
	// matters to Ray (POST /api/jobs/ and GET /api/jobs/ are the routes).
	req, err := http.NewRequestWithContext(ctx, r.method, c.base.String()+r.path, r.body)
	if err != nil {
		return nil, fmt.Errorf("ray: %s: %w", r.endpoint, err)
	}
	if r.length >= 0 {
		req.ContentLength = r.length
	}
	if seeker, ok := r.body.(io.Seeker); ok && r.body != nil {
		// A body that can be read again lets net/http retry the request
		// on a fresh connection when a kept-alive one was closed under
		// it before anything was sent.
		req.GetBody = func() (io.ReadCloser, error) {
			if _, err := seeker.Seek(0, io.SeekStart); err != nil {
				return nil, err
			}
			return io.NopCloser(r.body), nil
		}
	}
	if r.ctype != "" {
		req.Header.Set("Content-Type", r.ctype)
	}
	req.Header.Set("Accept", "application/json")
	c.authorize(req.Header)
	resp, err := c.http.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("ray: %s: %w", r.endpoint, ctxErr)
		}
		return nil, &UnreachableError{Address: c.Address(), Endpoint: r.endpoint, Err: unwrapURLError(err)}
	}
	return resp, nil
}

// authorize adds the token, when there is one, to a request's header.
func (c *Client) authorize(h http.Header) {
	if !c.token.Empty() {
		h.Set("Authorization", "Bearer "+c.token.secret)
	}
}

// redact removes the token from a text that came back from the server (a
// proxy could echo a request's header): no message carries it.
func (c *Client) redact(s string) string {
	if c.token.Empty() {
		return s
	}
	return strings.ReplaceAll(s, c.token.secret, "[token]")
}

// unwrapURLError drops net/http's "Get \"http://…\":" prefix, which only
// repeats what the caller's message already says.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// statusError reads an error answer and returns the error it means. The
// body is closed.
func (c *Client) statusError(resp *http.Response, endpoint string) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	body = []byte(c.redact(string(body)))
	msg := rayMessage(body)
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return &AuthError{Address: c.Address(), Endpoint: endpoint, Status: resp.StatusCode, Message: msg, Source: c.token.Source}
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		// Only a proxy answers these for the dashboard; the dashboard
		// itself answers 500 with a traceback.
		if !looksLikeRay(body) {
			return &UnreachableError{Address: c.Address(), Endpoint: endpoint,
				Err: fmt.Errorf("%d %s: %s", resp.StatusCode, http.StatusText(resp.StatusCode), msg)}
		}
	}
	return &APIError{Endpoint: endpoint, Status: resp.StatusCode, Message: msg}
}

func looksLikeRay(body []byte) bool {
	return strings.Contains(string(body), "Traceback (most recent call last):")
}

// call sends r and decodes a 2xx JSON answer into out (when out is not
// nil), reading at most limit bytes.
func (c *Client) call(ctx context.Context, r request, out any, limit int64) error {
	resp, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return c.statusError(resp, r.endpoint)
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return nil
	}
	return decodeJSON(resp.Body, r.endpoint, out, limit)
}

// decodeJSON decodes one JSON value of at most limit bytes.
func decodeJSON(body io.Reader, endpoint string, out any, limit int64) error {
	lr := &io.LimitedReader{R: body, N: limit + 1}
	data, err := io.ReadAll(lr)
	if err != nil {
		return fmt.Errorf("ray: %s: reading the answer: %w", endpoint, err)
	}
	if int64(len(data)) > limit {
		return &ProtocolError{Endpoint: endpoint, Detail: fmt.Sprintf("answer larger than %d bytes", limit)}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &ProtocolError{Endpoint: endpoint, Detail: fmt.Sprintf("not the JSON expected: %v (%s)", err, snippet(data))}
	}
	return nil
}

// snippet is the start of a body, for messages.
func snippet(b []byte) string {
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(b), "\uFFFD")), " ")
	if s == "" {
		return "empty body"
	}
	return fmt.Sprintf("%q", truncateUTF8(s, 120))
}

// pathSegment escapes one path segment (a submission id, a package name).
func pathSegment(s string) string { return url.PathEscape(s) }
