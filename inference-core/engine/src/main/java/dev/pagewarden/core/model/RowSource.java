package dev.pagewarden.core.model;

/**
 * Produces one row of a tensor's values on demand, so writers can stream a model to disk row by row
 * instead of holding it on the heap.
 */
@FunctionalInterface
public interface RowSource {
    /**
     * Writes row {@code row} into {@code dst}, whose length is the tensor's row length. Writers call it
     * for different rows from several threads at once, so it keeps no state between calls.
     */
    void fill(int row, float[] dst);

    /** The rows of an existing tensor, dequantised to float. */
    static RowSource of(Tensor t) {
        return (row, dst) -> t.rowInto(row, dst, 0);
    }
}
