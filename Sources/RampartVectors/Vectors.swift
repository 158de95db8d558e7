public enum VectorsPlaceholder {}
