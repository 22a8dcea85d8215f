# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# cupti.mk: builds $(OUTPUT)/libgaptrace-cupti.so against the CUDA toolkit's
# CUPTI.  Run by the top Makefile's `cupti` target:
#   make -f cupti/cupti.mk OUTPUT=.output CUDA_HOME=/usr/local/cuda Q=@

OUTPUT ?= .output
CUDA_HOME ?= /usr/local/cuda
CC ?= cc
Q ?= @
comma := ,

# Toolkits put CUPTI either next to the runtime or under extras/CUPTI.
CUPTI_INCDIRS := $(CUDA_HOME)/include $(wildcard $(CUDA_HOME)/extras/CUPTI/include)
CUPTI_LIBDIRS := $(CUDA_HOME)/lib64 $(CUDA_HOME)/extras/CUPTI/lib64

LIB := $(OUTPUT)/libgaptrace-cupti.so
# Its files share gaptrace_cupti_priv.h (which lists them).
SRCS := $(wildcard cupti/gaptrace_cupti*.c)
OBJS := $(patsubst cupti/%.c,$(OUTPUT)/cupti/%.o,$(SRCS))
HDRS := $(wildcard cupti/*.h include/gaptrace/*.h)

CUPTI_CFLAGS := -g -O2 -std=gnu11 -fPIC -fvisibility=hidden -fno-omit-frame-pointer \
	-D_GNU_SOURCE -Wall -Wextra -Werror -Wno-missing-field-initializers \
	-Icupti -Iinclude $(addprefix -I,$(CUPTI_INCDIRS))
# The rpath finds libcupti.so.13 where the toolkit keeps it on the GPU host;
# nodelete: our threads must never outlive the code they run.
CUPTI_LDFLAGS := -shared -Wl,-soname,libgaptrace-cupti.so -Wl,--no-undefined \
	-Wl,-z,nodelete -Wl,-z,now \
	$(addprefix -L,$(CUPTI_LIBDIRS)) $(addprefix -Wl$(comma)-rpath$(comma),$(CUPTI_LIBDIRS))
CUPTI_LDLIBS := -lcupti -lpthread -ldl

.DELETE_ON_ERROR:
.PHONY: all
all: $(LIB)

$(OUTPUT)/cupti/%.o: cupti/%.c $(HDRS) cupti/cupti.mk
	$(if $(Q),@printf '  %-8s %s\n' CC $(patsubst $(OUTPUT)/%,%,$@))
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUPTI_CFLAGS) -c $< -o $@

$(LIB): $(OBJS) cupti/cupti.mk
	$(if $(Q),@printf '  %-8s %s\n' CC-SO $(notdir $@))
	$(Q)$(CC) $(OBJS) $(CUPTI_LDFLAGS) $(CUPTI_LDLIBS) -o $@
