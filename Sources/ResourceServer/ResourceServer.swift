public enum ResourceServerModule {}
