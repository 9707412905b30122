package ray

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Ray's token authentication (Ray 2.52+, RAY_AUTH_MODE=token on the
// cluster): every request to the dashboard carries "Authorization: Bearer
// TOKEN", and the dashboard answers 401 without one and 403 with another.
// FindToken looks for the token where Ray's own tools do, in this order:
const (
	// TokenEnv holds the token itself.
	TokenEnv = "RAY_AUTH_TOKEN"
	// TokenPathEnv names a file whose first line is the token.
	TokenPathEnv = "RAY_AUTH_TOKEN_PATH"
)

// DefaultTokenFile is Ray's default token file, under the home folder:
// ~/.ray/auth_token (`ray get-auth-token --generate` writes it).
func DefaultTokenFile(home string) string { return filepath.Join(home, ".ray", "auth_token") }

// maxTokenFile bounds what is read of a token file (a token is 64
// characters; the file's first line is the token).
const maxTokenFile = 64 << 10

// TokenKind says which of Ray's places a token came from.
type TokenKind int

// The places, in the order FindToken looks.
const (
	TokenNone        TokenKind = iota // no token
	TokenFromEnv                      // $RAY_AUTH_TOKEN
	TokenFromPathEnv                  // the file $RAY_AUTH_TOKEN_PATH names
	TokenFromDefault                  // DefaultTokenFile
)

// TokenSource is where a token came from: what a message names instead of
// the token.
type TokenSource struct {
	Kind TokenKind
	Path string // the file, for TokenFromPathEnv and TokenFromDefault
}

func (s TokenSource) String() string {
	switch s.Kind {
	case TokenFromEnv:
		return "$" + TokenEnv
	case TokenFromPathEnv:
		return fmt.Sprintf("the file %s (named by $%s)", s.Path, TokenPathEnv)
	case TokenFromDefault:
		return fmt.Sprintf("Ray's default token file %s", s.Path)
	}
	return "nowhere (no token)"
}

// Token is a cluster's token and where it came from. Printing a Token
// (with any verb) prints its source, never the token.
type Token struct {
	secret string
	Source TokenSource
}

// Empty says there is no token.
func (t Token) Empty() bool { return t.secret == "" }

func (t Token) String() string { return "token from " + t.Source.String() }

// GoString keeps %#v from printing the token.
func (t Token) GoString() string { return t.String() }

// Format keeps every other verb (%v of a struct holding a Token, %q, %x)
// from printing the token.
func (t Token) Format(f fmt.State, _ rune) { io.WriteString(f, t.String()) }

// NewToken is a token given directly (tests; a token that came some other
// way). It is checked as FindToken checks one.
func NewToken(token string, source TokenSource) (Token, error) {
	if err := checkToken(token, source); err != nil {
		return Token{}, err
	}
	return Token{secret: token, Source: source}, nil
}

// FindToken finds the token as Ray's own tools do (Ray's
// AuthenticationTokenLoader): $RAY_AUTH_TOKEN when set and not empty; else
// the file $RAY_AUTH_TOKEN_PATH names when set (which must then hold a
// token); else Ray's default token file when it exists. A token is the
// value, or the file's first line, without surrounding white space. No
// token anywhere is an empty Token and no error. getenv reads the
// environment; home is the home folder ("" when there is none). An error
// names the place, never the token.
func FindToken(getenv func(string) string, home string) (Token, error) {
	if v := getenv(TokenEnv); v != "" {
		src := TokenSource{Kind: TokenFromEnv}
		tok := trimToken(v)
		if tok == "" {
			return Token{}, fmt.Errorf("ray: %s is set but holds no token (only white space)", src)
		}
		return NewToken(tok, src)
	}
	if p := getenv(TokenPathEnv); p != "" {
		src := TokenSource{Kind: TokenFromPathEnv, Path: p}
		tok, err := readTokenFile(p)
		if err != nil {
			return Token{}, fmt.Errorf("ray: the token: %s: %w", src, err)
		}
		if tok == "" {
			return Token{}, fmt.Errorf("ray: the token: %s holds no token on its first line", src)
		}
		return NewToken(tok, src)
	}
	if home == "" {
		return Token{}, nil
	}
	p := DefaultTokenFile(home)
	src := TokenSource{Kind: TokenFromDefault, Path: p}
	tok, err := readTokenFile(p)
	if errors.Is(err, fs.ErrNotExist) || err == nil && tok == "" {
		return Token{}, nil // as Ray: no token there
	}
	if err != nil {
		return Token{}, fmt.Errorf("ray: the token: %s: %w", src, err)
	}
	return NewToken(tok, src)
}

// readTokenFile reads a token file's first line (at most maxTokenFile
// bytes), trimmed.
func readTokenFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	line, err := bufio.NewReader(io.LimitReader(f, maxTokenFile)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	return trimToken(line), nil
}

// trimToken removes the white space Ray's loader removes around a token.
func trimToken(s string) string { return strings.Trim(s, " \t\n\r\f\v") }

// checkToken refuses a token that cannot travel in an HTTP header (a
// control character, a byte that is not text), naming its source only.
func checkToken(token string, src TokenSource) error {
	bad := token == ""
	for i := 0; i < len(token) && !bad; i++ {
		bad = token[i] < ' ' && token[i] != '\t' || token[i] == 0x7f
	}
	if bad {
		return fmt.Errorf("ray: the token from %s is not one a request can carry (empty, or with control characters)", src)
	}
	return nil
}
