// Package durable makes gameday's file replacements survive a power cut:
// a rename or a removal is on disk only once its directory is synced. The
// matrix and the fault journal need it most; a Raspberry Pi on an SD card
// is where a drill is most likely to lose power.
package durable

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// SyncDir makes a rename or a removal in dir durable. File systems that
// cannot sync a directory (EINVAL) are let be.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
