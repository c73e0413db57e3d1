import time
t=time.process_time()
import numba
print("import numba", time.process_time()-t)
import numpy as np
t=time.process_time()
from pdpboot.engine import _tree_kernel as K
print("import kernel", time.process_time()-t)
for name in ["walk","plan_stats"]:
    f=getattr(K,name)
    t=time.process_time()
    if name=="walk":
        i8=np.zeros(3,np.int64); f8=np.zeros(3); b=np.zeros(3,np.bool_)
        f(i8,f8,i8,i8,b,i8,np.zeros((0,257),np.bool_),np.zeros((3,1)),i8,np.zeros(0,np.int64),i8,2,0,np.zeros((2,2)),np.zeros(0,np.int64),f8,np.zeros((1,1,2)),np.zeros((0,0,0)),np.zeros((0,0),np.bool_),np.zeros((0,0,0)))
    else:
        i8=np.zeros(3,np.int64); f8=np.zeros(3)
        f(i8,i8,i8,f8,i8,np.zeros(0,np.int64),2,0,1.0)
    print(name, time.process_time()-t)
