package books

// SetMaxRows lowers the rows a query may give, for a test, until the
// returned function puts it back: a test of the bound need not fill a
// store with a million rows.
func SetMaxRows(n int) (restore func()) {
	old := maxRows
	maxRows = n
	return func() { maxRows = old }
}
