package ray

import "context"

// AddressError is a cluster address that is not a dashboard's URL.
type AddressError struct{ Err error }

func (e *AddressError) Error() string { return e.Err.Error() }
func (e *AddressError) Unwrap() error { return e.Err }

// Connect returns a client for the cluster whose dashboard is at address,
// with the cluster's token when it uses Ray's token authentication (found
// where Ray's own tools look: FindToken, with getenv and the home folder;
// never on the command line), once it has checked, before anything is
// read, packaged or uploaded, that binary (stratbench's own) can run on
// the nodes (CheckExecutable) and that the address is a Ray dashboard with
// a job API this build can use (Preflight, within twice DialTimeout). Its
// refusals are an *AddressError, or CheckExecutable's, FindToken's or
// Preflight's error, each naming which.
func Connect(ctx context.Context, address, binary string, getenv func(string) string, home string) (*Client, error) {
	if _, err := CheckExecutable(binary); err != nil {
		return nil, err
	}
	token, err := FindToken(getenv, home)
	if err != nil {
		return nil, err
	}
	client, err := New(address, Options{Token: token})
	if err != nil {
		return nil, &AddressError{err}
	}
	pctx, cancel := context.WithTimeout(ctx, 2*DialTimeout)
	defer cancel()
	if _, err := client.Preflight(pctx); err != nil {
		client.Close()
		return nil, err
	}
	return client, nil
}
