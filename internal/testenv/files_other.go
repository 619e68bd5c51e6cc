//go:build !unix

package testenv

import "errors"

// RaiseOpenFiles cannot raise the limit here.
func RaiseOpenFiles(n uint64) error { return errors.New("no open-file limit to raise here") }
