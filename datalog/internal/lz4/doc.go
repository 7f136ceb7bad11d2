// Package lz4 writes the LZ4 frames in which a log's record batches store their
// compressed buffers, as Arrow's LZ4_FRAME codec has them: ordinary frames of
// independent 64 KB blocks that any LZ4 reader decodes (pierrec/lz4, which arrow-go
// reads them with, and the reference C library, which Arrow C++ and so pyarrow use).
//
// Besides pierrec/lz4's general compressor, an Encoder has a matcher for buffers of
// fixed-width rows that mostly repeat the row before them, as the observations of a
// grid world do: it compares each byte with the one a row above, which runs at the
// speed of a comparison. AppendStored writes a frame of stored blocks, for data that
// compression would not shrink.
package lz4
