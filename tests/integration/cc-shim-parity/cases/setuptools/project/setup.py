from setuptools import Extension, setup

setup(name="parity_ext", version="1.0", ext_modules=[Extension("parity_ext", ["parity_ext.c"])])
