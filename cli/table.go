package cli

import (
	"io"
	"text/tabwriter"
)

// newTable returns a writer of a table's rows to w, aligned by text/tabwriter: cells
// end with a tab, and each column is as wide as its widest cell plus pad spaces. Text
// is left-aligned; a cell of figures carries its width in its verb (%9.3f), so that a
// column of them lines up on the right. A row without a tab ends the table's columns,
// so a blank line or a heading between two tables aligns each on its own. Flush
// writes the rows to w.
func newTable(w io.Writer, pad int) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, pad, ' ', 0)
}
