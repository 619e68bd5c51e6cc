package gameday

// SetBeforeRemovingFaults makes f run just before the faults are removed
// at the end of the load, and returns what undoes it.
func SetBeforeRemovingFaults(f func()) (undo func()) {
	old := beforeRemovingFaults
	beforeRemovingFaults = f
	return func() { beforeRemovingFaults = old }
}
