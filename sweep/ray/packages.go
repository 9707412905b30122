package ray

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
)

// PackageURI names a package stored in the cluster's GCS, as runtime_env
// takes it: "gcs://NAME.zip". Packages built by BuildPackage are named
// after their content, "gcs://_ray_pkg_<sha256 hex>.zip", following Ray's
// own "_ray_pkg_" convention for content-addressed packages.
type PackageURI string

// packageNamePattern is checked with the length apart (at most 200 before
// ".zip"), as submissionIDPattern.
var packageNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+\.zip$`)

// split returns the URI's protocol and name, checked.
func (u PackageURI) split() (protocol, name string, err error) {
	protocol, name, ok := strings.Cut(string(u), "://")
	if !ok || protocol != "gcs" || len(name) > 200+len(".zip") || !packageNamePattern.MatchString(name) {
		return "", "", fmt.Errorf("ray: package URI %q: want gcs://NAME.zip (NAME of letters, digits, '_', '-', '.')", string(u))
	}
	return protocol, name, nil
}

func (u PackageURI) endpoint() (string, error) {
	protocol, name, err := u.split()
	if err != nil {
		return "", err
	}
	return "/api/packages/" + protocol + "/" + pathSegment(name), nil
}

// PackageExists says whether the cluster holds the package. Asking also
// pins it for a while (Ray's temporary reference, 10 minutes by default),
// so a package found here is not collected before a job that uses it is
// submitted.
func (c *Client) PackageExists(ctx context.Context, uri PackageURI) (bool, error) {
	path, err := uri.endpoint()
	if err != nil {
		return false, err
	}
	err = c.call(ctx, newRequest(http.MethodGet, path), nil, 0)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNotFound):
		return false, nil
	}
	return false, err
}

// UploadPackage stores size bytes read from r as the package uri. Ray's
// dashboard refuses a body over MaxPackageBytes. When r is also an
// io.Seeker (a file), a request that met a closing connection is sent
// again from the start. r is not closed.
func (c *Client) UploadPackage(ctx context.Context, uri PackageURI, r io.Reader, size int64) error {
	path, err := uri.endpoint()
	if err != nil {
		return err
	}
	if size > MaxPackageBytes {
		return &TooLargeError{Limit: MaxPackageBytes, Size: size}
	}
	req := newRequest(http.MethodPut, path)
	req.length, req.ctype = size, "application/zip"
	// Wrapped: net/http closes a body that is an io.Closer, and r is the
	// caller's.
	switch b := r.(type) {
	case io.ReadSeeker:
		req.body = struct{ io.ReadSeeker }{b}
	default:
		req.body = struct{ io.Reader }{r}
	}
	if size == 0 {
		req.body = http.NoBody
	}
	return c.call(ctx, req, nil, 0)
}

// EnsurePackage makes sure the cluster holds pkg, uploading it only when the
// cluster does not have it already (content addressing: an unchanged
// package is never sent twice). It reports whether it uploaded. The
// package is pinned for a while afterwards (see PackageExists): submit the
// jobs that use it within minutes.
func (c *Client) EnsurePackage(ctx context.Context, pkg *Package) (uploaded bool, err error) {
	exists, err := c.PackageExists(ctx, pkg.URI)
	if err != nil || exists {
		return false, err
	}
	f, err := os.Open(pkg.Path)
	if err != nil {
		return false, fmt.Errorf("ray: package %s: %w", pkg.URI, err)
	}
	defer f.Close()
	if err := c.UploadPackage(ctx, pkg.URI, f, pkg.Size); err != nil {
		return false, err
	}
	// Asking again pins the new package, and proves Ray stored it.
	exists, err = c.PackageExists(ctx, pkg.URI)
	if err != nil {
		return true, err
	}
	if !exists {
		return true, &ProtocolError{Endpoint: "GET /api/packages/…", Detail: fmt.Sprintf("package %s missing right after its upload", pkg.URI)}
	}
	return true, nil
}
