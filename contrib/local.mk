# contrib/local.mk
