/* runtime/cuda/kernels.cu - the built-in models' kernels; see kernels.h and kernel_body.h. */
#include "runtime/cuda/kernels.h"

#include <cuda_runtime.h>

#include "runtime/cuda/kernel_body.h"

/* Blocks of 64 threads: a layer's threads spread over more multiprocessors
 * than with larger blocks. */
#define BLOCK 64

__global__ void fc_kernel(const float *__restrict__ x, const float *__restrict__ wt, const float *__restrict__ bias,
			  float *__restrict__ y, int n, int in, int out, int relu)
{
	int u = blockIdx.x * blockDim.x + threadIdx.x;
	if (u < out)
		sym_fc_unit(x, wt, bias, y, n, in, out, relu, u);
}

__global__ void conv_pool_kernel(const float *__restrict__ x, const float *__restrict__ w,
				 const float *__restrict__ bias, float *__restrict__ y, int n, int cin, int h, int wd,
				 int cout)
{
	long long per = (long long)cout * (h / 2) * (wd / 2);
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < per;
	     i += (long long)gridDim.x * blockDim.x)
		sym_conv_pool_elem(x, w, bias, y, n, cin, h, wd, cout, i);
}

extern "C" int sym__cuda_fc(const float *x, const float *wt, const float *bias, float *y, int n, int in, int out,
			    int relu, void *stream)
{
	unsigned blocks = (unsigned)((out + BLOCK - 1) / BLOCK);
	fc_kernel<<<blocks, BLOCK, 0, (cudaStream_t)stream>>>(x, wt, bias, y, n, in, out, relu);
	return (int)cudaGetLastError();
}

extern "C" int sym__cuda_conv_pool(const float *x, const float *w, const float *bias, float *y, int n, int cin, int h,
				   int wd, int cout, void *stream)
{
	long long per = (long long)cout * (h / 2) * (wd / 2);
	long long blocks = (per + BLOCK - 1) / BLOCK;
	if (blocks > (1 << 20))
		blocks = 1 << 20; /* the kernel strides over the rest */
	if (blocks < 1)
		blocks = 1;
	conv_pool_kernel<<<(unsigned)blocks, BLOCK, 0, (cudaStream_t)stream>>>(x, w, bias, y, n, cin, h, wd, cout);
	return (int)cudaGetLastError();
}
