/** Placeholder export: replaced by the signing implementation. */
export const placeholder = 1;
