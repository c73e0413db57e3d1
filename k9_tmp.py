import numpy as np, time
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor, RandomForestClassifier
from pdpboot.engine.tree import per_tree_partial_dependence
from pdpboot.engine import compute_pd
X,y=make_friedman1(n_samples=300,n_features=5,noise=1.0,random_state=0)
rf=RandomForestRegressor(20,random_state=0).fit(X,y)
g=[np.quantile(X[:,0],np.linspace(.05,.95,7)), np.quantile(X[:,1],[.2,.5,.8])]
for idx,gr in [((0,),g[:1]),((0,1),g)]:
  oob=np.random.default_rng(0).random((20,300))<.4
  t=time.time(); tp,ice,oi=per_tree_partial_dependence(rf,X,idx,gr,response_method="predict",individual=True,oob=oob); print(time.time()-t)
  ref=np.stack([compute_pd(tr,X,idx,gr,response_method="predict",method="brute",individual=True)[0] for tr in rf.estimators_])
  iceref=[compute_pd(tr,X,idx,gr,response_method="predict",method="brute",individual=True)[1] for tr in rf.estimators_]
  print(np.abs(tp-ref).max(), np.abs(ice-np.mean(iceref,0)).max(), np.abs(oi-sum(ic*o[:,None,None] if len(idx)==1 else ic*o[:,None,None,None] for ic,o in zip(iceref,oob))).max())
clf=RandomForestClassifier(10,random_state=0).fit(X,(y>14).astype(int)+(y>18))
tp,_,_=per_tree_partial_dependence(clf,X,(0,),g[:1],response_method="predict_proba")
ref=np.stack([compute_pd(tr,X,(0,),g[:1],response_method="predict_proba",method="brute",n_outputs=3)[0] for tr in clf.estimators_])
print(tp.shape, ref.shape, np.abs(tp-ref).max())
