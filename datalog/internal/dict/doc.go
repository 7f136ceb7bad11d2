// Package dict holds the dictionaries of a log's string columns (trial ids, agent
// ids, reward sources) within one part: Strings gives each value an index, in the
// order of their first lookups, and its values as the Arrow array that the part's
// batches share. It only grows within a part, so that a batch adds its new values
// to the part as a dictionary delta; Reset begins it anew for the next part.
package dict
