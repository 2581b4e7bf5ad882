# src/fs/local.mk
